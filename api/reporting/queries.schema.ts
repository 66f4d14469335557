import Joi from 'joi';
import type { ExpectedColumn, OnRowLimit, QueryLanguage } from '../../db/reporting/query.entity';
import type { HttpRequestSpec } from '../../domain/reporting/http-request';
import type { ParameterDef } from '../../domain/reporting/parameters';
import type { DatasourceKind } from '../../domain/reporting/query-runner';
import { KINDS as DATASOURCE_KINDS } from './datasources.schema';

/**
 * Query object bodies (docs/reporting.md "Query objects"). The shape is checked
 * here (unknown fields: 400 ERR_VALID_001); the text and parameter definitions are checked by the
 * service against the datasource's dialect, every problem at once (400 ERR_QRY_002).
 */

/** System limits (docs/reporting.md "Limits"): REPORTING_QUERY_TIMEOUT_SECONDS and REPORTING_MAX_ROWS defaults. */
/** The settings' own bounds; the deployment's REPORTING_* maximums are checked by the service (limits.ts). */
const SYSTEM_MAX_TIMEOUT_SECONDS = 24 * 3600;
const SYSTEM_MAX_ROWS = 10_000_000;
/** Rows a preview answers at most (docs/reporting.md "Query objects"). */
export const PREVIEW_MAX_ROWS = 1000;

const name = Joi.string().trim().min(1).max(100);
const description = Joi.string().trim().max(1000).allow('', null);
/** Longer texts reach the service, which names them TEXT_TOO_LONG with the other problems. */
const text = Joi.string().max(200_000).allow('');
const parameter = Joi.object({
  name: Joi.string().max(100).required(),
  type: Joi.string().max(20).required(),
  label: Joi.string().max(200).allow(''),
  required: Joi.boolean(),
  default: Joi.any(),
  multiple: Joi.boolean(),
  options: Joi.array().max(1000),
});
/** Query and report parameter definitions; their rules (at most 50, names, types) are the services' checks. */
export const parameters = Joi.array().items(parameter).max(100);
const expectedColumns = Joi.array()
  .items(Joi.object({ name: Joi.string().trim().min(1).max(200).required(), type: Joi.string().trim().max(50) }))
  .max(500)
  .allow(null);

/** An http query's request (language `http`); its placeholders and JSONata are checked by the service. */
const request = Joi.object({
  method: Joi.string().valid('GET', 'POST').required(),
  path: Joi.string().max(2000).required(),
  query: Joi.object().pattern(Joi.string().max(200), Joi.string().max(2000).allow('')).max(100),
  headers: Joi.object().pattern(Joi.string().max(100), Joi.string().max(2000).allow('')).max(50),
  body: Joi.any(),
  rowsPath: Joi.string().max(2000),
}).allow(null);
/** Optional JSONata over `{rows, params}` (http and table); longer ones reach the service (TEXT_TOO_LONG). */
const transform = Joi.string().max(100_000).allow(null);

export interface QueryFields {
  name: string;
  description?: string | null;
  folderId?: string | null;
  datasourceId: string;
  language: QueryLanguage;
  text?: string;
  request?: HttpRequestSpec | null;
  transform?: string | null;
  parameters?: ParameterDef[];
  expectedColumns?: ExpectedColumn[] | null;
  maxRows?: number;
  timeoutSeconds?: number;
  onRowLimit?: OnRowLimit;
}

export type CreateQueryInput = QueryFields;
export type UpdateQueryInput = Partial<QueryFields>;

const fields = {
  name,
  description,
  folderId: Joi.string().trim().max(100).allow('', null),
  datasourceId: Joi.string().max(100),
  language: Joi.string().valid('sql', 'http', 'table'),
  text,
  request,
  transform,
  parameters,
  expectedColumns,
  maxRows: Joi.number().integer().min(1).max(SYSTEM_MAX_ROWS),
  timeoutSeconds: Joi.number().integer().min(1).max(SYSTEM_MAX_TIMEOUT_SECONDS),
  onRowLimit: Joi.string().valid('fail', 'truncate'),
};

export const createQuerySchema = Joi.object<CreateQueryInput, true>({
  ...fields,
  name: name.required(),
  datasourceId: fields.datasourceId.required(),
  language: fields.language.default('sql'),
});

export const updateQuerySchema = Joi.object<UpdateQueryInput, true>(fields).min(1);

export interface ListQueriesQuery {
  page: number;
  limit: number;
  search?: string;
  datasourceId?: string;
}

export const listQueriesSchema = Joi.object<ListQueriesQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  search: Joi.string().trim().max(100).allow(''),
  datasourceId: Joi.string().max(100),
});

export interface PublishInput {
  releaseNotes?: string | null;
}

export const publishSchema = Joi.object<PublishInput, true>({ releaseNotes: Joi.string().trim().max(2000).allow('', null) });

/** A query's checks against a datasource, or against a datasource kind before any exists (docs/reporting.md "Query objects"). */
export interface ValidateQueryInput {
  datasourceId?: string;
  kind?: DatasourceKind;
  /** Without it: the language the datasource's kind runs (sql, http or table). */
  language?: QueryLanguage;
  text?: string;
  request?: HttpRequestSpec | null;
  transform?: string | null;
  parameters?: ParameterDef[];
}

export const validateQuerySchema = Joi.object<ValidateQueryInput, true>({
  datasourceId: fields.datasourceId,
  kind: Joi.string().valid(...DATASOURCE_KINDS).description('A datasource kind, in place of `datasourceId`: the checks of that kind\'s dialect'),
  language: fields.language,
  text,
  request,
  transform,
  parameters,
}).xor('datasourceId', 'kind');

export interface PreviewQueryInput {
  parameters?: Record<string, unknown>;
  /** `draft` (the default) or a published version's number. */
  version?: 'draft' | number;
  limit: number;
  wait?: number;
}

export const previewQuerySchema = Joi.object<PreviewQueryInput, true>({
  parameters: Joi.object().unknown(true),
  version: Joi.alternatives(Joi.string().valid('draft'), Joi.number().integer().min(1).max(1_000_000)).description('`draft` (the default) or a published version number'),
  limit: Joi.number().integer().min(1).max(PREVIEW_MAX_ROWS).default(100),
  /** A datasource behind an agent: seconds to wait for its answer before 202 with the task id. */
  wait: Joi.number().integer().min(1).max(55),
});
