import { randomBytes } from 'node:crypto';
import type { TestApp } from './app';
import { buildInvoiceTemplate } from './rendering-fixtures';

/** Template API test data: a create body with overrides (outline-style factory) and helpers. */

export interface TemplateBody {
  name: string;
  description?: string | null;
  outputFormats: string[];
  schema: unknown;
  variables?: unknown;
  constants?: unknown;
  calculatedVariables?: unknown;
  folderId?: string | null;
}

/**
 * A valid create body: a small letter with one required string variable, an array variable
 * rendered as a table, a constant and a calculated total, so previews show every kind of value.
 */
export function buildTemplate(overrides: Partial<TemplateBody> = {}): TemplateBody {
  return {
    name: `Letter ${randomBytes(3).toString('hex')}`,
    description: 'A letter to a customer',
    outputFormats: ['pdf', 'excel'],
    schema: {
      pageSize: 'A4',
      sections: [
        {
          id: 'main',
          title: 'Letter',
          components: [
            { id: 'title', type: 'heading', props: { text: 'Dear {{customer}}', level: 1 } },
            { id: 'from', type: 'text', props: { text: 'From {{company}}, total {{total}}' } },
            {
              id: 'lines',
              type: 'table',
              props: { dataSource: 'items', columns: [{ header: 'Item', field: 'label' }, { header: 'Amount', field: 'amount', format: 'number' }] },
            },
          ],
        },
      ],
    },
    variables: [
      { name: 'customer', type: 'string', required: true, description: 'Who the letter is for' },
      { name: 'dueDate', type: 'date', required: false },
      {
        name: 'items',
        type: 'array',
        required: false,
        defaultValue: [],
        items: { type: 'object', properties: [{ name: 'label', type: 'string', required: true }, { name: 'amount', type: 'number' }] },
      },
    ],
    constants: { company: 'Formwork GmbH' },
    calculatedVariables: [{ name: 'total', expression: '$sum(items.amount)' }],
    ...overrides,
  };
}

/** The rendering engineer's invoice, as a create body. */
export function buildInvoiceBody(overrides: Partial<TemplateBody> = {}): TemplateBody {
  return { name: `Invoice ${randomBytes(3).toString('hex')}`, outputFormats: ['pdf', 'excel'], ...buildInvoiceTemplate(), ...overrides };
}

export interface CreatedTemplate {
  id: string;
  shortId: string;
  slug: string;
  name: string;
  outputFormats: string[];
  createdAt: string;
}

/** Creates a template through the API as `token` and returns the 201 body. */
export async function createTemplate(
  app: TestApp,
  token: string,
  overrides: Partial<TemplateBody> = {},
  headers: Record<string, string> = {},
): Promise<CreatedTemplate> {
  const res = await app.request('POST', '/api/templates', { token, body: buildTemplate(overrides), headers });
  if (res.status !== 201) throw new Error(`create template failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Publishes the draft and returns the 201 body (`{id, version, publishedAt}`). */
export async function publish(app: TestApp, token: string, ref: string, releaseNotes?: string): Promise<{ id: string; version: number; publishedAt: string }> {
  const res = await app.request('POST', `/api/templates/${ref}/publish`, { token, body: releaseNotes === undefined ? {} : { releaseNotes } });
  if (res.status !== 201) throw new Error(`publish failed: ${res.status} ${res.text}`);
  return res.body;
}

/** The project's activity entries of the given types, oldest first (read straight from the table). */
export async function activityTypes(app: TestApp, projectId: string, prefix = 'template_'): Promise<Array<{ type: string; data: any; user_id: string | null }>> {
  return app.services.db.query(
    `SELECT type, data, user_id FROM activities WHERE project_id = $1 AND type LIKE $2 ORDER BY created_at, id`,
    [projectId, `${prefix}%`],
  );
}

/** The personal project of a signed-up user (the project a JWT acts on without X-Team-Id). */
export async function personalProjectId(app: TestApp, userId: string): Promise<string> {
  const [row] = await app.services.db.query(`SELECT id FROM projects WHERE owner_id = $1 AND is_personal`, [userId]);
  return row.id;
}
