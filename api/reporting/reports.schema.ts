import Joi from 'joi';
import type { DatasetShape, ReportFormat, VersionRef } from '../../db/reporting/report.entity';
import type { ParameterDef } from '../../domain/reporting/parameters';
import { parameters } from './queries.schema';
import type { OutputOptions } from '../../domain/documents/output';
import { outputSchema } from '../documents/output.schema';

/**
 * Report bodies (docs/reporting.md "Reports"). The shape is checked here (unknown
 * fields: 400 ERR_VALID_001); names, mappings, outputs and the file name pattern are checked by the
 * service, every problem at once (400 ERR_RPT_005), and again with the dependencies at publish.
 */

const MAX_DATASETS = 10;

const name = Joi.string().trim().min(1).max(100);
const description = Joi.string().trim().max(1000).allow('', null);
const ref = Joi.string().trim().min(1).max(200);
const versionRef = Joi.alternatives().try(Joi.string().valid('latest'), Joi.number().integer().min(1).max(1_000_000_000));

export interface DatasetInput {
  name: string;
  queryId: string;
  queryVersion: VersionRef;
  parameters: Record<string, unknown>;
  shape: DatasetShape;
  bindTo?: string | null;
}

export interface OutputInput {
  format: ReportFormat;
  datasets?: string[];
  output?: OutputOptions;
}

export interface ReportFields {
  name: string;
  description?: string | null;
  folderId?: string | null;
  templateId?: string | null;
  templateVersion?: VersionRef;
  datasets: DatasetInput[];
  parameters?: ParameterDef[];
  outputs?: OutputInput[];
  filenamePattern?: string | null;
  skipIfEmpty?: boolean;
  useCredit?: boolean;
}

export type CreateReportInput = ReportFields;
export type UpdateReportInput = Partial<ReportFields>;

const dataset = Joi.object<DatasetInput, true>({
  name: Joi.string().max(100).required(),
  queryId: ref.required(),
  queryVersion: versionRef.default('latest'),
  // Values are `"{{reportParam}}"` or literals of the query parameter's type (checked at publish).
  parameters: Joi.object()
    .pattern(Joi.string().max(100), Joi.alternatives().try(Joi.string().max(10_000), Joi.number(), Joi.boolean(), Joi.valid(null), Joi.array().max(1000).items(Joi.string().max(1000), Joi.number(), Joi.boolean())))
    .max(100)
    .default({}),
  shape: Joi.string().valid('rows', 'first_row', 'value').default('rows'),
  bindTo: Joi.string().max(100).allow(null),
});

const output = Joi.object<OutputInput, true>({
  format: Joi.string().valid('pdf', 'excel', 'csv').required(),
  datasets: Joi.array().items(Joi.string().max(100)).min(1).max(MAX_DATASETS),
  output: outputSchema.description('A pdf output only: what is done to the printed PDF, as on generation (docs/documents.md "Output options")'),
});

const fields = {
  name,
  description,
  folderId: Joi.string().trim().max(100).allow('', null),
  templateId: ref.allow(null),
  templateVersion: versionRef,
  datasets: Joi.array().items(dataset).min(1).max(MAX_DATASETS),
  parameters,
  outputs: Joi.array().items(output).min(1).max(3),
  // Longer patterns reach the service, which names them with the other problems.
  filenamePattern: Joi.string().max(1000).allow(null),
  skipIfEmpty: Joi.boolean(),
  useCredit: Joi.boolean(),
};

export const createReportSchema = Joi.object<CreateReportInput, true>({ ...fields, name: name.required(), datasets: fields.datasets.required() });

export const updateReportSchema = Joi.object<UpdateReportInput, true>(fields).min(1);

export interface ListReportsQuery {
  page: number;
  limit: number;
  search?: string;
  folderId?: string;
  isPublished?: boolean;
  sortBy: 'name' | 'createdAt' | 'updatedAt';
  sortOrder: 'asc' | 'desc';
}

export const listReportsSchema = Joi.object<ListReportsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  search: Joi.string().trim().max(100).allow(''),
  folderId: Joi.string().trim().max(100),
  isPublished: Joi.boolean(),
  sortBy: Joi.string().valid('name', 'createdAt', 'updatedAt').default('createdAt'),
  sortOrder: Joi.string().lowercase().valid('asc', 'desc').default('desc'),
});

/** POST /reports/:id/preview (docs/reporting.md "Report preview"). */
export interface PreviewReportInput {
  parameters?: Record<string, unknown>;
  format: 'pdf' | 'excel' | 'csv';
  dataset?: string;
}

export const previewReportSchema = Joi.object<PreviewReportInput, true>({
  parameters: Joi.object().unknown(true),
  format: Joi.string().valid('pdf', 'excel', 'csv').default('pdf'),
  dataset: Joi.string().trim().min(1).max(100),
});
