import Joi from 'joi';
import type { OutputOptions } from '../../domain/documents/output';
import type { PassedThrough } from '../../domain/templates/check-inputs';
import { outputSchema } from '../documents/output.schema';

/**
 * Request shapes of the template endpoints. The definition's parts (`schema`, `variables`,
 * `constants`, `calculatedVariables`) pass through as they are: the template validators check
 * them and report every problem with its path (ERR_TMPL_008), which Joi here could not do as well.
 * `outputFormats` items are checked by the service so an unknown format is ERR_TMPL_009.
 */

const name = Joi.string().trim().min(1).max(200);
const description = Joi.string().allow('', null).max(2000);
/** Folders are labels (no folder resource exists); null clears it on update. */
const folderId = Joi.string().trim().min(1).max(100).allow(null);
const releaseNotes = Joi.string().allow('', null).max(2000);

/**
 * A template's fields as create and update take them. `Parts` types the definition's parts: the
 * services take any value (`unknown`, e.g. a draft made by a report import); a request's are
 * `PassedThrough`, what Joi's strict schema map can say of `Joi.any()`.
 */
export interface TemplateFieldsInput<Parts = unknown> {
  name?: string;
  description?: string | null;
  outputFormats?: unknown[];
  schema?: Parts;
  variables?: Parts;
  constants?: Parts;
  calculatedVariables?: Parts;
  folderId?: string | null;
}

export type CreateTemplateInput<Parts = unknown> = TemplateFieldsInput<Parts> & { name: string; outputFormats: unknown[]; schema: Parts };

export const createTemplateSchema = Joi.object<CreateTemplateInput<PassedThrough>, true>({
  name: name.required(),
  description,
  outputFormats: Joi.array().required(),
  schema: Joi.any().required(),
  variables: Joi.any(),
  constants: Joi.any(),
  calculatedVariables: Joi.any(),
  folderId,
});

/** PUT: every field optional; `outputFormats` is accepted too, beyond the spec's list. */
export const updateTemplateSchema = Joi.object<TemplateFieldsInput<PassedThrough>, true>({
  name,
  description,
  outputFormats: Joi.array(),
  schema: Joi.any(),
  variables: Joi.any(),
  constants: Joi.any(),
  calculatedVariables: Joi.any(),
  folderId,
});

export const TEMPLATE_SORT_FIELDS = ['name', 'createdAt', 'updatedAt'] as const;

export interface ListTemplatesQuery {
  page: number;
  limit: number;
  search?: string;
  folderId?: string;
  isPublished?: boolean;
  sortBy: (typeof TEMPLATE_SORT_FIELDS)[number];
  sortOrder: 'asc' | 'desc';
}

/** Same paging as the API key list (spec, Limits §2): a limit above 100 is refused, not clamped. */
export const listTemplatesSchema = Joi.object<ListTemplatesQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  search: Joi.string().trim().max(200).allow(''),
  folderId: Joi.string().trim().max(100),
  isPublished: Joi.boolean(),
  // Most recently edited first: what a dashboard list opens on.
  sortBy: Joi.string().valid(...TEMPLATE_SORT_FIELDS).default('updatedAt'),
  sortOrder: Joi.string().lowercase().valid('asc', 'desc').default('desc'),
});

export interface PublishInput {
  releaseNotes?: string | null;
}

export const publishSchema = Joi.object<PublishInput, true>({ releaseNotes });

export interface BulkDeleteInput {
  ids: string[];
}

export const bulkDeleteSchema = Joi.object<BulkDeleteInput, true>({
  ids: Joi.array().items(Joi.string().min(1).max(200)).min(1).max(100).required(),
});

export { validateSchemaSchema, validateVariablesSchema } from '../../domain/templates/check-inputs';

export interface PreviewInput {
  variables?: Record<string, unknown>;
  format?: 'pdf' | 'excel';
  output?: OutputOptions;
}

export const previewSchema = Joi.object<PreviewInput, true>({
  variables: Joi.object(),
  format: Joi.string().valid('pdf', 'excel'),
  output: outputSchema.description('What is done to the printed PDF, as on generation (docs/documents.md "Output options"); the preview keeps its watermark'),
});

export interface SampleDataInput {
  data: Record<string, unknown>;
}

/** PUT /:id/sample-data: the variables the template's editors preview with. */
export const sampleDataSchema = Joi.object<SampleDataInput, true>({
  data: Joi.object().required(),
});

export interface CalculateInput {
  variables?: Record<string, unknown>;
}

/** POST /:id/calculate and /:id/preview/grid: the sample data to evaluate or render with. */
export const calculateSchema = Joi.object<CalculateInput, true>({
  variables: Joi.object(),
});

export const ANALYTICS_PERIODS = ['7d', '30d', '90d', '1y'] as const;

export interface AnalyticsQuery {
  period: (typeof ANALYTICS_PERIODS)[number];
  startDate?: Date;
  endDate?: Date;
}

export const analyticsSchema = Joi.object<AnalyticsQuery, true>({
  period: Joi.string().valid(...ANALYTICS_PERIODS).default('30d'),
  startDate: Joi.date().iso(),
  endDate: Joi.date().iso(),
});

export type DuplicateHandling = 'rename' | 'skip' | 'overwrite';

export interface ImportFields {
  duplicateHandling: DuplicateHandling;
}

/** POST /import: the multipart fields beside the file. */
export const importFieldsSchema = Joi.object<ImportFields, true>({
  duplicateHandling: Joi.string().valid('rename', 'skip', 'overwrite').default('rename'),
});
