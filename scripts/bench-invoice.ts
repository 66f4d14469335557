import type { TemplateDefinition } from '../domain/templates/template.types';

/** The one-page invoice the render benchmarks print: heading, key-value block, a 12-line table, a QR code, a footer with page numbers. */
export const INVOICE: TemplateDefinition = {
  schema: {
    pageSize: 'A4',
    currency: 'EUR',
    footer: { left: 'Formwork GmbH', right: 'Page {page} of {pages}' },
    sections: [
      {
        id: 'invoice',
        components: [
          { id: 'title', type: 'heading', props: { text: 'Invoice {{number}}', level: 1 } },
          { id: 'meta', type: 'keyValue', props: { items: [{ label: 'Customer', value: '{{customer}}' }, { label: 'Total', value: '{{total | currency}}' }] } },
          {
            id: 'lines',
            type: 'table',
            props: {
              dataSource: 'items',
              columns: [
                { header: 'Description', field: 'description' },
                { header: 'Qty', field: 'qty', format: 'number' },
                { header: 'Price', field: 'price', format: 'currency' },
              ],
            },
          },
          { id: 'qr', type: 'qrcode', props: { value: 'https://pay.example.com/{{number}}' } },
        ],
      },
    ],
  },
  variables: [{ name: 'items', type: 'array', required: true }],
  calculatedVariables: [{ name: 'total', expression: '$sum(items.(qty * price))' }],
};
