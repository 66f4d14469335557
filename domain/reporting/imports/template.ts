import type { ExpectedColumn } from './model';

/**
 * The draft template a JRXML import makes next to its query (docs/reporting.md "Imports"): a heading with the
 * report's name and a table of its fields, bound to an array variable `rows` that a report's dataset
 * fills. A starting point: the band layout itself is not converted.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const NUMERIC = new Set(['number', 'integer']);

export interface DraftTemplate {
  schema: unknown;
  variables: unknown[];
}

export function draftTemplateFor(title: string, columns: readonly ExpectedColumn[]): DraftTemplate {
  // Placeholders are the template's syntax: braces in the report's name are left out of the heading.
  const heading = title.replace(/[{}]/g, '').trim() || 'Report';
  const fields = columns.filter((c) => IDENTIFIER.test(c.name)).slice(0, 100);
  const components: unknown[] = [{ id: 'title', type: 'heading', props: { text: heading, level: 1 } }];
  if (fields.length > 0) {
    components.push({
      id: 'rows',
      type: 'table',
      props: { dataSource: 'rows', columns: fields.map((f) => (NUMERIC.has(f.type ?? '') ? { header: f.name, field: f.name, format: 'number' } : { header: f.name, field: f.name })) },
    });
  }
  return {
    schema: { pageSize: 'A4', sections: [{ id: 'main', title: heading, components }] },
    variables: fields.length
      ? [
          {
            name: 'rows',
            type: 'array',
            required: false,
            defaultValue: [],
            items: { type: 'object', properties: fields.map((f) => ({ name: f.name, type: NUMERIC.has(f.type ?? '') ? 'number' : f.type === 'boolean' ? 'boolean' : 'string' })) },
          },
        ]
      : [],
  };
}
