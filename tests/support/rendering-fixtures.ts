import type { Component, TemplateDefinition } from '../../domain/templates/template.types';

/** Test data builders for templates and rendering (outline-style factories with overrides). */

let seq = 0;
export function component(type: Component['type'], props: Record<string, unknown>, id?: string): Component {
  seq += 1;
  return { id: id ?? `${type}-${seq}`, type, props };
}

export function buildTemplate(overrides: Partial<TemplateDefinition> & { components?: Component[] } = {}): TemplateDefinition {
  const { components, ...rest } = overrides;
  return {
    schema: { pageSize: 'A4', sections: [{ id: 'main', components: components ?? [] }] },
    variables: [],
    constants: {},
    calculatedVariables: [],
    ...rest,
  };
}

export function buildInvoiceTemplate(overrides: Partial<TemplateDefinition> = {}): TemplateDefinition {
  return {
    schema: {
      pageSize: 'A4',
      currency: 'EUR',
      locale: 'en-US',
      footer: { left: '{{company.name}}', right: 'Page {page} of {pages}' },
      header: { right: 'Invoice {{invoiceNumber}}' },
      sections: [
        {
          id: 'invoice',
          title: 'Invoice {{invoiceNumber}}',
          components: [
            component('heading', { text: 'Invoice for {{customer}}', level: 1 }, 'title'),
            component('keyValue', {
              items: [
                { label: 'Issued', value: '{{issuedOn | date}}' },
                { label: 'Total', value: '{{total | currency}}' },
                { label: 'Paid', value: '{{paid}}', format: 'boolean' },
              ],
            }, 'summary'),
            component('table', {
              dataSource: 'items',
              columns: [
                { header: 'Description', field: 'description' },
                { header: 'Qty', field: 'qty', format: 'number' },
                { header: 'Price', field: 'price', format: 'currency' },
                { header: 'Shipped', field: 'shippedOn', format: 'date' },
                { header: 'Taxable', field: 'taxable', format: 'boolean' },
              ],
            }, 'lines'),
            component('text', { text: 'Thank you for your business, {{customer}}.' }, 'thanks'),
          ],
        },
      ],
    },
    variables: [
      { name: 'invoiceNumber', type: 'string', required: true },
      { name: 'customer', type: 'string', required: true },
      { name: 'issuedOn', type: 'date', required: true },
      { name: 'paid', type: 'boolean', required: false, defaultValue: false },
      {
        name: 'items',
        type: 'array',
        required: true,
        items: {
          type: 'object',
          properties: [
            { name: 'description', type: 'string', required: true },
            { name: 'qty', type: 'number', required: true },
            { name: 'price', type: 'number', required: true },
            { name: 'shippedOn', type: 'date' },
            { name: 'taxable', type: 'boolean' },
          ],
        },
      },
    ],
    constants: { company: { name: 'Formwork GmbH' } },
    calculatedVariables: [{ name: 'total', expression: '$sum(items.(qty * price))' }],
    ...overrides,
  };
}

export function invoiceVariables(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    invoiceNumber: 'INV-2024-001',
    customer: 'Ada Lovelace',
    issuedOn: '2024-03-01',
    paid: true,
    items: [
      { description: 'Analytical engine', qty: 2, price: 1250.5, shippedOn: '2024-02-20', taxable: true },
      { description: 'Punch cards', qty: 100, price: 0.25, shippedOn: '2024-02-21', taxable: false },
    ],
    ...overrides,
  };
}
