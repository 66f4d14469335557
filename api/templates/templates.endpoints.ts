import { deleted, type JsonSchema, listOf, ok, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { operationsOf, routeTable } from '../openapi/route';
import * as schema from './templates.schema';
import { VARIABLE_TYPES } from '../../domain/templates/template.types';

/**
 * The template routes' declarations (docs/architecture.md "One declaration per route"): each is the
 * route's OpenAPI operation, its body and query schemas, and so its handler's input type;
 * templates.routes.ts, template-versions.routes.ts, template-io.routes.ts, component-types.ts and
 * template-examples.ts mount them with their handlers. Apart from the handlers, so that the OpenAPI
 * document is built without loading the services. The same routes are declared under each prefix:
 * /api/templates/attachment (attachment templates), /api/templates and /api/v1/templates.
 * Reads: API keys with `read_templates`; writes: a member's session.
 */

/** The spec's legacy alias, whose unknown templates are "attachment templates". */
export const ATTACHMENT_PREFIX = '/api/templates/attachment';

/**
 * Where the template API is mounted, with each prefix's tag. The alias comes first: otherwise
 * `/api/templates/:id` would take `/api/templates/attachment` as a template named "attachment"
 * (a slug that is reserved for this reason).
 */
export const TEMPLATE_PREFIXES = [
  [ATTACHMENT_PREFIX, 'Attachment templates'],
  ['/api/templates', 'Templates'],
  ['/api/v1/templates', 'Templates (v1)'],
] as const;

export type TemplatePrefix = (typeof TEMPLATE_PREFIXES)[number][0];

/** GET …/examples: what a person picks from (docs/templates.md "Examples"). */
const EXAMPLE_LIST = listOf({
  type: 'object',
  required: ['key', 'name', 'description', 'outputFormats'],
  properties: { key: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' }, outputFormats: { type: 'array', items: { type: 'string', enum: ['pdf', 'excel'] } } },
});

/** GET …/component-types (api/templates/component-types.ts). */
const COMPONENT_TYPES = listOf({
  type: 'object',
  required: ['type', 'container', 'children', 'props'],
  properties: {
    type: { type: 'string' },
    container: { type: 'boolean' },
    children: { type: ['string', 'null'], enum: ['components', 'columns', null] },
    props: { type: 'object', additionalProperties: true, description: 'JSON Schema (2020-12 dialect) of the props' },
  },
});

const issues = (description: string): JsonSchema => ({
  type: 'array',
  description,
  items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string', description: 'Where in the input (`sections[0].components[2].props.text`)' }, message: { type: 'string' } }, additionalProperties: false },
});

/** POST …/validate-schema and …/validate-variables (domain/templates/template.types.ts ValidationResult). */
const CHECK_RESULT: JsonSchema = {
  type: 'object',
  required: ['valid', 'errors', 'warnings'],
  properties: { valid: { type: 'boolean', description: 'No errors (warnings do not count)' }, errors: issues('What makes it invalid'), warnings: issues('What renders, but probably not as meant') },
  additionalProperties: false,
};

/** POST …/import (api/templates/template-io.service.ts ImportResult). */
const importResult = (statuses: string[]): JsonSchema => ({
  type: 'object',
  required: ['status', 'templateId', 'message'],
  properties: { status: { type: 'string', enum: statuses }, templateId: { type: 'string', format: 'uuid', description: 'The created, replaced or existing template' }, message: { type: 'string' } },
  additionalProperties: false,
});

/**
 * GET …/:id/export (domain/templates/template-file.ts TemplateFile): the file import reads. Its fixed
 * top-level fields are described; the definition's parts are the tenant's own (see component-types).
 */
const TEMPLATE_FILE: JsonSchema = {
  type: 'object',
  required: ['formatVersion', 'exportedAt', 'name', 'description', 'outputFormats', 'schema', 'variables', 'constants', 'calculatedVariables'],
  properties: {
    formatVersion: { type: 'integer', description: 'The file layout, 1 today' },
    exportedAt: { type: 'string', format: 'date-time' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    outputFormats: { type: 'array', items: { type: 'string', enum: ['pdf', 'excel'] } },
    schema: { type: 'object', additionalProperties: true, description: 'The draft\'s layout (its sections and components)' },
    variables: { type: 'array', items: { type: 'object', additionalProperties: true } },
    constants: { type: 'object', additionalProperties: true },
    calculatedVariables: { type: 'array', items: { type: 'object', additionalProperties: true } },
    assets: {
      type: 'array',
      description: 'The project\'s images and fonts the definition names (`asset:<id>`), with their bytes; absent when it names none',
      items: { type: 'object', required: ['ref', 'name', 'data'], properties: { ref: { type: 'string' }, name: { type: 'string' }, data: { type: 'string', contentEncoding: 'base64' } }, additionalProperties: false },
    },
  },
  additionalProperties: false,
};

/** POST …/examples/:key: the import's answer and the example's sample data (variables to generate with). */
const STARTED_FROM_EXAMPLE: JsonSchema = {
  type: 'object',
  required: ['status', 'templateId', 'message', 'sampleData'],
  properties: {
    status: { type: 'string', enum: ['created'] },
    templateId: { type: 'string', format: 'uuid' },
    message: { type: 'string' },
    sampleData: { type: 'object', additionalProperties: true },
  },
};

/** GET and PUT …/:id/sample-data. */
const SAMPLE_DATA: JsonSchema = { type: 'object', required: ['data'], properties: { data: { type: 'object', additionalProperties: true } } };

/** POST …/:id/calculate: each calculated variable's value. */
const CALCULATED_VALUES: JsonSchema = {
  type: 'object',
  required: ['values'],
  properties: { values: { type: 'object', additionalProperties: true, description: 'Each calculated variable of the draft by name, in their order; null when it evaluated to nothing' } },
};

/** POST …/:id/preview/grid: the workbook as cells (domain/documents/previews.ts WorkbookGrid). */
const GRID_CELL: JsonSchema = {
  type: 'object',
  required: ['column', 'text'],
  properties: {
    column: { type: 'integer', description: '1 is column A' },
    text: { type: 'string', description: 'The value as its number format shows it' },
    bold: { type: 'boolean' },
    italic: { type: 'boolean' },
    color: { type: 'string', description: 'CSS colour #rrggbb' },
    fill: { type: 'string', description: 'CSS colour #rrggbb' },
    align: { type: 'string', enum: ['left', 'center', 'right'] },
  },
};
const WORKBOOK_GRID: JsonSchema = {
  type: 'object',
  required: ['sheets', 'truncated'],
  properties: {
    truncated: { type: 'boolean', description: 'More than 20 sheets: only the first 20 are here' },
    sheets: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'rowCount', 'columnCount', 'truncated', 'columns', 'rows'],
        properties: {
          name: { type: 'string' },
          rowCount: { type: 'integer', description: 'Rows in the file' },
          columnCount: { type: 'integer', description: 'Columns in the file' },
          truncated: { type: 'boolean', description: 'The file has more than the 500 rows or 50 columns shown' },
          columns: { type: 'array', items: { type: ['number', 'null'] }, description: "Each shown column's width in characters; null is Excel's default" },
          rows: {
            type: 'array',
            items: {
              type: 'object',
              required: ['row', 'cells'],
              properties: { row: { type: 'integer' }, height: { type: 'number', description: 'Points' }, cells: { type: 'array', items: GRID_CELL, description: 'Cells with a value or a fill; the others are empty' } },
            },
          },
        },
      },
    },
  },
};

const FOLDERS: JsonSchema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: { type: 'object', required: ['name', 'templates'], properties: { name: { type: 'string' }, templates: { type: 'integer' } } } } },
};

/** GET …/:id/analytics (templates.presenter.ts presentAnalytics). */
const TEMPLATE_ANALYTICS: JsonSchema = {
  type: 'object',
  required: ['templateId', 'templateName', 'usage', 'performance', 'trend'],
  properties: {
    templateId: { type: 'string', format: 'uuid' },
    templateName: { type: 'string' },
    usage: { type: 'object', required: ['total', 'last7Days', 'last30Days'], properties: { total: { type: 'integer', description: 'Documents in the period' }, last7Days: { type: 'integer' }, last30Days: { type: 'integer' } } },
    performance: {
      type: 'object',
      required: ['successRate', 'avgGenerationTimeMs', 'failedCount'],
      properties: { successRate: { type: 'number', description: 'Percent of finished documents that completed' }, avgGenerationTimeMs: { type: 'integer' }, failedCount: { type: 'integer' } },
    },
    trend: { type: 'array', items: { type: 'object', required: ['date', 'count'], properties: { date: { type: 'string', format: 'date' }, count: { type: 'integer' } } } },
  },
};

const AUTOMATION_CHILD: Record<string, JsonSchema> = { key: { type: 'string' }, label: { type: 'string' }, type: { type: 'string', enum: [...VARIABLE_TYPES] } };
/** GET …/:id/automation-fields. */
const AUTOMATION_FIELDS: JsonSchema = {
  type: 'object',
  required: ['fields'],
  properties: {
    fields: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'label', 'type', 'required'],
        properties: { ...AUTOMATION_CHILD, required: { type: 'boolean' }, children: { type: 'array', items: { type: 'object', required: ['key', 'label', 'type'], properties: AUTOMATION_CHILD }, description: 'An array field: the columns of one element' } },
      },
    },
  },
};

/** GET …/:id/versions: one version. */
const VERSION_PROPERTIES: Record<string, JsonSchema> = {
  id: { type: 'string', format: 'uuid' },
  version: { type: 'integer' },
  releaseNotes: { type: ['string', 'null'] },
  publishedAt: { type: 'string', format: 'date-time' },
  publishedBy: { type: ['string', 'null'], description: "The publisher's display name; null once that account is gone" },
};
const VERSION: JsonSchema = { type: 'object', required: Object.keys(VERSION_PROPERTIES), properties: VERSION_PROPERTIES };

/** GET …/:id/versions/:versionId: the template as that version published it. */
const VERSION_STATE: JsonSchema = {
  type: 'object',
  required: [...Object.keys(VERSION_PROPERTIES), 'templateId', 'name', 'outputFormats', 'schema'],
  properties: {
    ...VERSION_PROPERTIES,
    templateId: { type: 'string', format: 'uuid' },
    shortId: { type: 'string' },
    slug: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    outputFormats: { type: 'array', items: { type: 'string', enum: ['pdf', 'excel'] } },
    schema: { type: 'object', additionalProperties: true },
    variables: { type: 'array', items: { type: 'object', additionalProperties: true } },
    constants: { type: 'object', additionalProperties: true },
    calculatedVariables: { type: 'array', items: { type: 'object', additionalProperties: true } },
  },
};

/** POST …/:id/publish: the new version (templates.presenter.ts presentPublished). */
const PUBLISHED: JsonSchema = {
  type: 'object',
  required: ['id', 'templateId', 'version', 'publishedAt'],
  properties: { id: { type: 'string', format: 'uuid' }, templateId: { type: 'string', format: 'uuid' }, version: { type: 'integer' }, publishedAt: { type: 'string', format: 'date-time' } },
};

const RESTORED: JsonSchema = {
  type: 'object',
  required: ['success', 'newVersion', 'message'],
  properties: { success: { type: 'boolean' }, newVersion: { type: 'integer' }, message: { type: 'string' } },
};

const BULK_DELETED: JsonSchema = {
  type: 'object',
  required: ['deleted', 'skipped', 'errors'],
  properties: {
    deleted: { type: 'integer' },
    skipped: { type: 'integer' },
    errors: { type: 'array', items: { type: 'object', required: ['id', 'reason'], properties: { id: { type: 'string' }, reason: { type: 'string' } } } },
  },
};

/**
 * The template routes under one prefix, in the order of the OpenAPI document (the routers register
 * static paths before `/:id` ones, whatever this order). The embedded designer's own calls also take
 * an embed token under /api/templates (docs/embedding.md, api/templates/embed-fence.ts).
 */
function templateEndpoints(prefix: TemplatePrefix, tag: string) {
  const route = routeTable(tag);
  const id = { id: 'The template id or slug' };
  const version = { ...id, versionId: 'The version id' };
  const designer = prefix === '/api/templates' ? { embedToken: true } : {};
  return {
    bulkDelete: route('post', `${prefix}/bulk-delete`, 'Delete many templates', { security: 'team', request: { body: schema.bulkDeleteSchema }, responses: { 200: ok('What was deleted', BULK_DELETED) } }),
    validateSchema: route('post', `${prefix}/validate-schema`, 'Check a template definition without saving it', { security: 'project', request: { body: schema.validateSchemaSchema }, responses: { 200: ok('Problems found, if any', CHECK_RESULT) } }),
    validateVariables: route('post', `${prefix}/validate-variables`, 'Check data against a template\'s variables', { security: 'project', request: { body: schema.validateVariablesSchema }, responses: { 200: ok('Problems found, if any', CHECK_RESULT) } }),
    create: route('post', prefix, 'Create a template', { security: 'team', idempotent: true, request: { body: schema.createTemplateSchema }, responses: { 201: ok('The draft template', resource('CreatedTemplate')) } }),
    list: route('get', prefix, 'List templates', { security: 'project', request: { query: schema.listTemplatesSchema }, responses: { 200: ok('A page of templates', pageOf(resource('TemplateSummary'))) } }),
    folders: route('get', `${prefix}/folders`, 'Folders in use', {
      security: 'project',
      description: 'A folder is a label on templates (`folderId`): the labels in use, by name, each with its number of templates (at most 1,000). List a folder with `GET …?folderId=`.',
      responses: { 200: ok('The folders', FOLDERS) },
    }),
    get: route('get', `${prefix}/:id`, 'Get a template', { security: 'project', ...designer, request: { params: id }, responses: { 200: ok('The template', resource('Template')) } }),
    update: route('put', `${prefix}/:id`, 'Update a template\'s draft', { security: 'team', ...designer, request: { params: id, body: schema.updateTemplateSchema }, responses: { 200: ok('The template', resource('Template')) } }),
    delete: route('delete', `${prefix}/:id`, 'Delete a template', { security: 'team', request: { params: id }, responses: { 200: deleted() } }),
    duplicate: route('post', `${prefix}/:id/duplicate`, 'Copy a template', { security: 'team', idempotent: true, request: { params: id }, responses: { 201: ok('The copy', resource('Template')) } }),
    publish: route('post', `${prefix}/:id/publish`, 'Publish the draft as a new version', { security: 'team', ...designer, request: { params: id, body: schema.publishSchema }, responses: { 201: ok('The version', PUBLISHED) } }),
    versions: route('get', `${prefix}/:id/versions`, 'Versions of a template', { security: 'project', request: { params: id }, responses: { 200: ok('The versions, newest first', { type: 'array', items: VERSION }) } }),
    version: route('get', `${prefix}/:id/versions/:versionId`, 'Get a version', { security: 'project', request: { params: version }, responses: { 200: ok('The version', VERSION_STATE) } }),
    restore: route('post', `${prefix}/:id/versions/:versionId/restore`, 'Publish an old version again', { security: 'team', request: { params: version, body: schema.publishSchema }, responses: { 200: ok('The new version', RESTORED) } }),
    // Multipart: the fields are `body`, the file is `file` (template-io.routes.ts checks it is there before the fields).
    import: route('post', `${prefix}/import`, 'Import a template file', {
      security: 'team',
      request: { body: schema.importFieldsSchema, bodyType: 'multipart' },
      responses: { 201: ok('Created', importResult(['created'])), 200: ok('Replaced or skipped, as `duplicateHandling` says', importResult(['overwritten', 'skipped'])) },
    }),
    componentTypes: route('get', `${prefix}/component-types`, 'Component types and the JSON Schema of their props', {
      description: 'Converted from the Joi schemas validate-schema checks with, so an editor built on them and the API agree. `children`: where a container holds components.',
      security: 'project',
      ...designer,
      responses: { 200: ok('Every component type', COMPONENT_TYPES) },
    }),
    examples: route('get', `${prefix}/examples`, 'Examples to start from', { security: 'project', responses: { 200: ok('The examples: key, name, description, output formats', EXAMPLE_LIST) } }),
    startFromExample: route('post', `${prefix}/examples/:key`, 'Create a template from an example', {
      security: 'team',
      request: { params: { key: 'invoice, quote, report or certificate' } },
      responses: { 201: ok('The imported draft (as an import answers) and the example\'s sample data', STARTED_FROM_EXAMPLE) },
    }),
    export: route('get', `${prefix}/:id/export`, 'Export a template as a file', { security: 'project', request: { params: id }, responses: { 200: ok('The template file (JSON attachment)', TEMPLATE_FILE) } }),
    // Validated by its handler: an unknown `format` is ERR_TMPL_009 (template-io.routes.ts).
    preview: route('post', `${prefix}/:id/preview`, 'Render a preview with sample data', {
      security: 'project',
      ...designer,
      request: { params: id, body: schema.previewSchema },
      // An unknown `format` is ERR_TMPL_009, as on generation.
      codes: { format: 'ERR_TMPL_009' },
      responses: { 200: { description: 'The rendered preview (PDF, HTML or image)', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
    }),
    previewGrid: route('post', `${prefix}/:id/preview/grid`, 'Preview the workbook as a grid', {
      security: 'project',
      ...designer,
      description:
        "An `excel` template's draft rendered with sample data, as /preview with `format: excel` would make it, and read back as cells: values as their number formats show them, fonts, fills (an Excel table's style included), alignment and widths of the first 20 sheets, 500 rows and 50 columns. Shares the preview budget (ERR_LIMIT_014).",
      request: { params: id, body: schema.calculateSchema },
      responses: { 200: ok('The workbook as a grid', WORKBOOK_GRID) },
    }),
    sampleData: route('get', `${prefix}/:id/sample-data`, "The template's sample data", {
      security: 'project',
      ...designer,
      description: 'The variables its editors preview with; `{}` when none was kept.',
      request: { params: id },
      responses: { 200: ok('The sample data', SAMPLE_DATA) },
    }),
    keepSampleData: route('put', `${prefix}/:id/sample-data`, 'Keep sample data with the template', {
      security: 'project',
      ...designer,
      description: 'Up to 256 KB of JSON. Not part of the definition: versions, updatedAt and generation are untouched.',
      request: { params: id, body: schema.sampleDataSchema },
      responses: { 200: ok('The sample data kept', SAMPLE_DATA) },
    }),
    calculate: route('post', `${prefix}/:id/calculate`, 'Evaluate the calculated variables with sample data', {
      security: 'project',
      ...designer,
      description: "The draft's calculated variables as a render with these variables would see them, evaluated in the evaluation workers under the same budget.",
      request: { params: id, body: schema.calculateSchema },
      responses: { 200: ok('The calculated values', CALCULATED_VALUES) },
    }),
    analytics: route('get', `${prefix}/:id/analytics`, 'Usage of a template', { security: 'project', request: { params: id, query: schema.analyticsSchema }, responses: { 200: ok('Counts over the period', TEMPLATE_ANALYTICS) } }),
    automationFields: route('get', `${prefix}/:id/automation-fields`, 'Fields an automation can fill', { security: 'project', request: { params: id }, responses: { 200: ok('The fields of the newest published version (the draft before the first publish)', AUTOMATION_FIELDS) } }),
  };
}

export type TemplateEndpoints = ReturnType<typeof templateEndpoints>;

/** The template routes under each prefix (one declaration per route and prefix). */
export const templateEndpointsAt = Object.fromEntries(TEMPLATE_PREFIXES.map(([prefix, tag]) => [prefix, templateEndpoints(prefix, tag)])) as Record<TemplatePrefix, TemplateEndpoints>;

/** The OpenAPI operations of these routes, prefix by prefix (api/openapi/operations.ts). */
export const templateOperations = TEMPLATE_PREFIXES.flatMap(([prefix]) => operationsOf(templateEndpointsAt[prefix]));
