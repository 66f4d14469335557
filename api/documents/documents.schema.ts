import Joi from 'joi';
import { FILENAME_PATTERN } from '../../domain/documents/files';
import { JOB_STATUSES, type JobStatus } from '../../domain/documents/job-status';
import type { OutputOptions } from '../../domain/documents/output';
import type { DocumentFormat } from '../../domain/documents/types';
import { outputSchema } from './output.schema';

const templateRef = Joi.string().trim().min(1).max(200);
const format = Joi.string().valid('pdf', 'excel', 'png');
const filename = Joi.string().trim().pattern(FILENAME_PATTERN).max(200);
/** Checked in detail by checkMetadata (flat, 10 KB, scalar values). */
const metadata = Joi.object().unknown(true);

/** POST /api/documents/generate. */
export interface GenerateInput {
  templateId: string;
  format: DocumentFormat;
  variables: Record<string, unknown>;
  filename?: string;
  metadata?: Record<string, unknown>;
  useCredit: boolean;
  output?: OutputOptions;
}

export const generateSchema = Joi.object<GenerateInput, true>({
  templateId: templateRef.required(),
  format: format.required(),
  variables: Joi.object().unknown(true).required(),
  filename,
  metadata,
  useCredit: Joi.boolean().default(false),
  output: outputSchema,
});

/** POST /api/documents/generate/batch. */
export interface BatchInput {
  templateId: string;
  format: DocumentFormat;
  documents: Array<{ variables: Record<string, unknown>; filename?: string; metadata?: Record<string, unknown> }>;
  metadata?: Record<string, unknown>;
  useCredit: boolean;
  output?: OutputOptions;
}

export const batchSchema = (maxDocuments: number) =>
  Joi.object<BatchInput, true>({
    templateId: templateRef.required(),
    format: format.required(),
    documents: Joi.array()
      .items(Joi.object({ variables: Joi.object().unknown(true).required(), filename, metadata }))
      .min(1)
      .max(maxDocuments)
      .required()
      .messages({ 'array.max': `documents may hold at most ${maxDocuments} items per batch` }),
    metadata,
    useCredit: Joi.boolean().default(false),
    output: outputSchema,
  });

export interface ListJobsQuery {
  offset: number;
  limit: number;
  status?: JobStatus;
  templateId?: string;
  batchId?: string;
}

export const listJobsSchema = Joi.object<ListJobsQuery, true>({
  offset: Joi.number().integer().min(0).default(0),
  limit: Joi.number().integer().min(1).max(100).default(20),
  status: Joi.string().valid(...JOB_STATUSES),
  /** Id, shortId or slug (jobs.service.ts listJobs). */
  templateId: templateRef,
  batchId: Joi.string().uuid(),
});

export interface ExportJobsQuery {
  format: 'csv' | 'json';
  startDate?: Date;
  endDate?: Date;
  status?: JobStatus;
}

export const exportJobsSchema = Joi.object<ExportJobsQuery, true>({
  format: Joi.string().valid('csv', 'json').default('csv'),
  startDate: Joi.date().iso(),
  endDate: Joi.date().iso(),
  status: Joi.string().valid(...JOB_STATUSES),
});

export interface JobIdsInput {
  jobIds: string[];
}

export const jobIdsSchema = Joi.object<JobIdsInput, true>({ jobIds: Joi.array().items(Joi.string().uuid()).min(1).max(1000).unique().required() });

export interface AnalyticsQuery {
  startDate?: Date;
  endDate?: Date;
}

export const analyticsSchema = Joi.object<AnalyticsQuery, true>({ startDate: Joi.date().iso(), endDate: Joi.date().iso() });

/** A route that takes no query parameter: any is refused. */
export type NoQuery = Record<string, never>;

export const noQuerySchema = Joi.object<NoQuery, true>({});
