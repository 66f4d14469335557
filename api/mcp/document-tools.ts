import Joi from 'joi';
import { statusUrlOf } from '../accepted';
import { loadPublishedVersion } from '../../db/templates/template-lookup';
import { presentJob } from '../../domain/documents/presenter';
import { pickDefinition } from '../../domain/templates/template-definition';
import type { TemplateVariable, VariableField, VariableType } from '../../domain/templates/template.types';
import { DOCUMENT_ACCESS } from '../documents/documents.routes';
import { generateSchema } from '../documents/documents.schema';
import { outputSchema } from '../documents/output.schema';
import { joiToJsonSchema } from '../openapi/joi-schema';
import { generate, type GenerateInput, type Generated } from '../documents/documents.service';
import { downloadLink, findJob, notFound } from '../documents/jobs.service';
import { TEMPLATE_ACCESS } from '../templates/template-guards';
import { presentTemplateList } from '../templates/templates.presenter';
import { listTemplatesSchema } from '../templates/templates.schema';
import { getTemplate, listTemplates } from '../templates/templates.service';
import { CREATES, IDEMPOTENCY_KEY_ARG, IDEMPOTENT_REPLAYED, keyedCall, PAGE_ARGS, pageSchema, READ_ONLY, type JsonObjectSchema, type McpTool } from './mcp-tool';
import { isUuid } from '../../domain/ids';

/** Template and document tools: the services and presenters of api/templates and api/documents. */

const ref = Joi.string().trim().min(1).max(200).required();
const templateArg = { type: 'string', description: 'Template id (UUID), shortId or slug; list_templates shows them' };

const JSON_TYPES: Record<VariableType, Record<string, unknown>> = {
  string: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  date: { type: 'string', format: 'date' },
  array: { type: 'array' },
  object: { type: 'object' },
  image: { type: 'string', description: 'Image URL or data: URI' },
};

function fieldsSchema(fields: Array<TemplateVariable | VariableField>): Record<string, unknown> {
  const properties = Object.fromEntries(
    fields.map((v) => {
      const s: Record<string, unknown> = { ...JSON_TYPES[v.type], ...(v.description ? { description: v.description } : {}) };
      const items = 'items' in v ? v.items : undefined;
      if (v.type === 'array' && items) s.items = items.properties?.length ? { type: 'object', ...fieldsSchema(items.properties) } : JSON_TYPES[items.type];
      return [v.name, s];
    }),
  );
  const required = fields.filter((v) => v.required === true && !('defaultValue' in v && v.defaultValue !== undefined)).map((v) => v.name);
  return { properties, ...(required.length ? { required } : {}) };
}

const jobSchema: JsonObjectSchema = {
  type: 'object',
  properties: { jobId: { type: 'string' }, status: { type: 'string' }, format: { type: 'string' }, templateId: { type: 'string' }, downloadUrl: { type: 'string' } },
  required: ['jobId', 'status', 'format', 'templateId'],
};

export const documentTools: McpTool[] = [
  {
    name: 'list_templates',
    title: 'List document templates',
    description: 'Templates of this project, a page at a time (GET /api/templates). Only published ones generate documents.',
    inputSchema: {
      type: 'object',
      properties: { ...PAGE_ARGS, search: { type: 'string', description: 'Part of the name' }, isPublished: { type: 'boolean' } },
    },
    outputSchema: pageSchema({
      type: 'object',
      properties: { id: { type: 'string' }, slug: { type: 'string' }, name: { type: 'string' }, outputFormats: { type: 'array', items: { type: 'string' } }, isPublished: { type: 'boolean' } },
      required: ['id', 'slug', 'name', 'outputFormats', 'isPublished'],
    }),
    annotations: READ_ONLY,
    access: TEMPLATE_ACCESS.read,
    args: listTemplatesSchema,
    async run(ctx, query) {
      const { templates, total } = await listTemplates({ db: ctx.services.db, evaluator: ctx.services.evaluator }, ctx.scope.projectId, query);
      return presentTemplateList(templates, total, query.page, query.limit);
    },
  },
  {
    name: 'get_template_fields',
    title: 'Get the variables of a template',
    description:
      "The variables a template takes (of its published version, which generate_document renders; the draft's until it is published) and a JSON Schema of the `variables` object.",
    inputSchema: { type: 'object', properties: { templateId: templateArg }, required: ['templateId'] },
    outputSchema: {
      type: 'object',
      properties: {
        templateId: { type: 'string' },
        slug: { type: 'string' },
        name: { type: 'string' },
        outputFormats: { type: 'array', items: { type: 'string' } },
        version: { type: ['integer', 'null'], description: 'Published version the fields are of; null for an unpublished draft' },
        variables: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, type: { type: 'string' }, required: { type: 'boolean' } } } },
        variablesSchema: { type: 'object' },
      },
      required: ['templateId', 'slug', 'name', 'outputFormats', 'version', 'variables', 'variablesSchema'],
    },
    annotations: READ_ONLY,
    access: TEMPLATE_ACCESS.read,
    args: Joi.object({ templateId: ref }),
    async run(ctx, { templateId }: { templateId: string }) {
      const template = await getTemplate({ db: ctx.services.db, evaluator: ctx.services.evaluator }, ctx.scope.projectId, templateId);
      const published = template.latestVersion > 0 ? await loadPublishedVersion(ctx.services.db, ctx.scope.projectId, template.id) : undefined;
      const variables = pickDefinition(published?.definition ?? template.draft).variables ?? [];
      return {
        templateId: template.id,
        slug: template.slug,
        name: template.name,
        outputFormats: published?.outputFormats ?? template.outputFormats,
        version: published?.version ?? null,
        variables,
        variablesSchema: { type: 'object', ...fieldsSchema(variables) },
      };
    },
  },
  {
    name: 'generate_document',
    title: 'Generate a document',
    description:
      'Queues a PDF, Excel or PNG document from a published template (POST /api/documents/generate), optionally PDF/A with a Factur-X invoice, signed or password-protected (`output`). Answers at once with a jobId; follow it with get_job until status is completed, then use its downloadUrl.',
    inputSchema: {
      type: 'object',
      properties: {
        templateId: templateArg,
        format: { type: 'string', enum: ['pdf', 'excel', 'png'] },
        variables: { type: 'object', description: 'Values for the template variables (get_template_fields lists them)' },
        output: { ...joiToJsonSchema(outputSchema), description: 'What is done to the PDF: PDF/A, attachments, Factur-X, signature, encryption, PNG pages (docs/documents.md "Output options")' },
        filename: { type: 'string' },
        metadata: { type: 'object', description: 'Flat metadata kept with the job' },
        useCredit: { type: 'boolean', description: 'Spend a credit instead of the monthly free quota (no watermark)' },
        idempotencyKey: IDEMPOTENCY_KEY_ARG,
      },
      required: ['templateId', 'format', 'variables'],
    },
    outputSchema: {
      type: 'object',
      properties: {
        jobId: { type: 'string' },
        status: { type: 'string' },
        statusUrl: { type: 'string' },
        estimatedWaitSeconds: { type: 'number' },
        idempotentReplayed: IDEMPOTENT_REPLAYED,
      },
      required: ['jobId', 'status', 'statusUrl', 'estimatedWaitSeconds'],
    },
    annotations: CREATES,
    access: DOCUMENT_ACCESS.generate,
    args: (generateSchema as Joi.ObjectSchema).keys({ idempotencyKey: Joi.string().min(1).max(255) }),
    async run(ctx, { idempotencyKey, ...input }: GenerateInput & { idempotencyKey?: string }) {
      const answerOf = ({ job, estimatedWaitSeconds }: Generated) => ({
        jobId: job.id,
        status: job.status,
        statusUrl: statusUrlOf(ctx.services.config.publicUrl, `/api/documents/jobs/${job.id}`),
        estimatedWaitSeconds,
      });
      // With a key the answer is stored in the transaction that inserts the job (docs/idempotency.md).
      const { answer, replayed } = await keyedCall(ctx, 'generate_document', idempotencyKey, input, async (store) =>
        answerOf(await generate(ctx.services, { projectId: ctx.scope.projectId, apiKeyId: ctx.scope.apiKeyId }, input, store && ((m, g) => store(m, answerOf(g))))),
      );
      return replayed ? { ...answer, idempotentReplayed: true } : answer;
    },
  },
  {
    name: 'get_job',
    title: 'Get a document job',
    description: "A document job's status and, once completed, its download link (GET /api/documents/jobs/:jobId).",
    inputSchema: { type: 'object', properties: { jobId: { type: 'string', description: 'The jobId generate_document answered' } }, required: ['jobId'] },
    outputSchema: jobSchema,
    annotations: READ_ONLY,
    access: DOCUMENT_ACCESS.read,
    args: Joi.object({ jobId: ref }),
    async run(ctx, { jobId }: { jobId: string }) {
      if (!isUuid(jobId)) throw notFound();
      const job = await findJob(ctx.services, ctx.scope.projectId, jobId);
      // JSON drops the undefined fields REST's body drops too.
      return JSON.parse(JSON.stringify(presentJob(job, await downloadLink(ctx.services, job)))) as Record<string, unknown>;
    },
  },
];
