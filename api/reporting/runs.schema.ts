import Joi from 'joi';
import type { ReportRunStatus, RunTrigger } from '../../domain/reporting/run-status';

/** Run bodies and list filters (docs/reporting.md "Runs"). Unknown fields: 400 ERR_VALID_001. */

const FORMATS = ['pdf', 'excel', 'csv'] as const;

export interface StartRunInput {
  parameters?: Record<string, unknown>;
  version?: number;
  outputs?: Array<(typeof FORMATS)[number]>;
  channelIds?: string[];
  metadata?: Record<string, unknown>;
}

export const startRunSchema = Joi.object<StartRunInput, true>({
  parameters: Joi.object().unknown(true),
  version: Joi.number().integer().min(1).max(1_000_000_000),
  outputs: Joi.array().items(Joi.string().valid(...FORMATS)).min(1).max(3).unique(),
  channelIds: Joi.array().items(Joi.string().trim().min(1).max(100)).max(10).unique(),
  metadata: Joi.object().unknown(true),
});

export interface RetryRunInput {
  deliveriesOnly: boolean;
}

export const retryRunSchema = Joi.object<RetryRunInput, true>({
  deliveriesOnly: Joi.boolean().default(false),
});

export interface ExportRunsQuery {
  format: 'csv' | 'json';
  from?: Date;
  to?: Date;
  status?: ReportRunStatus;
  reportId?: string;
}

export const exportRunsSchema = Joi.object<ExportRunsQuery, true>({
  format: Joi.string().valid('csv', 'json').default('csv'),
  from: Joi.date().iso(),
  to: Joi.date().iso(),
  status: Joi.string().valid('queued', 'running', 'rendering', 'delivering', 'completed', 'failed', 'cancelled', 'skipped'),
  reportId: Joi.string().trim().min(1).max(200),
});

export interface ListRunsQuery {
  page: number;
  limit: number;
  reportId?: string;
  scheduleId?: string;
  jobRunId?: string;
  status?: ReportRunStatus;
  trigger?: RunTrigger;
  from?: Date;
  to?: Date;
  sortBy: 'createdAt' | 'scheduledFor' | 'status';
  sortOrder: 'asc' | 'desc';
}

export const listRunsSchema = Joi.object<ListRunsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  reportId: Joi.string().trim().min(1).max(200),
  scheduleId: Joi.string().guid(),
  jobRunId: Joi.string().guid(),
  status: Joi.string().valid('queued', 'running', 'rendering', 'delivering', 'completed', 'failed', 'cancelled', 'skipped'),
  trigger: Joi.string().valid('manual', 'api', 'schedule', 'job'),
  from: Joi.date().iso(),
  to: Joi.date().iso(),
  sortBy: Joi.string().valid('createdAt', 'scheduledFor', 'status').default('createdAt'),
  sortOrder: Joi.string().valid('asc', 'desc').default('desc'),
});
