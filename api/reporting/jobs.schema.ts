import Joi from 'joi';
import type { JobRunStatus } from '../../domain/reporting/job-run-status';

/** Report job bodies (docs/reporting.md "Jobs", "Limits"). Unknown fields: 400 ERR_VALID_001. */

const MAX_ITEMS = 20;
const ref = Joi.string().trim().min(1).max(200);

export interface JobItemInput {
  reportId: string;
  parameters: Record<string, unknown>;
  outputs?: Array<'pdf' | 'excel' | 'csv'>;
}

export interface JobFields {
  name: string;
  description?: string | null;
  items: JobItemInput[];
  delivery: 'bundle' | 'separate';
  concurrency: number;
  stopOnFailure: boolean;
  channelIds: string[];
}

const item = Joi.object<JobItemInput, true>({
  reportId: ref.required(),
  // Values are checked against the report's parameters when the job runs (the version may change).
  parameters: Joi.object()
    .pattern(Joi.string().max(100), Joi.alternatives().try(Joi.string().max(10_000), Joi.number(), Joi.boolean(), Joi.valid(null), Joi.array().max(1000).items(Joi.string().max(1000), Joi.number(), Joi.boolean())))
    .max(50)
    .default({}),
  outputs: Joi.array().items(Joi.string().valid('pdf', 'excel', 'csv')).min(1).max(3).unique(),
});

const fields = {
  name: Joi.string().trim().min(1).max(100),
  description: Joi.string().trim().max(1000).allow('', null),
  items: Joi.array().items(item).min(1).max(MAX_ITEMS),
  delivery: Joi.string().valid('bundle', 'separate'),
  concurrency: Joi.number().integer().min(1).max(5),
  stopOnFailure: Joi.boolean(),
  channelIds: Joi.array().items(ref).max(10).unique(),
};

export const createJobSchema = Joi.object<JobFields, true>({
  ...fields,
  name: fields.name.required(),
  items: fields.items.required(),
  delivery: fields.delivery.default('bundle'),
  concurrency: fields.concurrency.default(2),
  stopOnFailure: fields.stopOnFailure.default(false),
  channelIds: fields.channelIds.default([]),
});

export const updateJobSchema = Joi.object<Partial<JobFields>, true>(fields).min(1);

export interface StartJobRunInput {
  channelIds?: string[];
  metadata?: Record<string, unknown>;
}

export const startJobRunSchema = Joi.object<StartJobRunInput, true>({
  channelIds: fields.channelIds,
  metadata: Joi.object().unknown(true),
});

export interface ListJobsQuery {
  page: number;
  limit: number;
  search?: string;
}

export const listJobsSchema = Joi.object<ListJobsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  search: Joi.string().trim().max(100),
});

export interface ListJobRunsQuery {
  page: number;
  limit: number;
  jobId?: string;
  status?: JobRunStatus;
  from?: Date;
  to?: Date;
}

export const listJobRunsSchema = Joi.object<ListJobRunsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  jobId: ref,
  status: Joi.string().valid('queued', 'running', 'delivering', 'completed', 'failed', 'cancelled', 'skipped'),
  from: Joi.date().iso(),
  to: Joi.date().iso(),
});
