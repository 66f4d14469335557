import Joi from 'joi';
import { RUN_STATUSES, type RunStatus } from '../../domain/flow/run-status';

/** Spec, Limits §3: metadata is flat, at most 10 KB, values string, number, boolean or null. */
const runMetadata = Joi.object()
  .pattern(/^.{1,100}$/, Joi.alternatives(Joi.string().allow(''), Joi.number(), Joi.boolean()).allow(null))
  .custom((value, helpers) => (Buffer.byteLength(JSON.stringify(value)) > 10 * 1024 ? helpers.error('object.max10kb') : value))
  .messages({ 'object.max10kb': 'metadata must be at most 10 KB' });

export interface SubmitRunInput {
  /** Object (variables mode) or string (freetext mode); the engine checks which. */
  payload: Record<string, unknown> | string | unknown[];
  metadata?: Record<string, string | number | boolean | null>;
}

export const submitRunSchema = Joi.object<SubmitRunInput, true>({
  payload: Joi.alternatives(Joi.object().unknown(true), Joi.string().allow(''), Joi.array()).required(),
  metadata: runMetadata,
});

export const RUN_SORT_FIELDS = ['createdAt', 'status'] as const;

export interface ListRunsQuery {
  page: number;
  limit: number;
  status?: RunStatus;
  source?: 'rest' | 'mcp';
  /** Runs created at or after this instant. */
  from?: Date;
  /** Runs created before this instant. */
  to?: Date;
  sortBy: (typeof RUN_SORT_FIELDS)[number];
  sortOrder: 'asc' | 'desc';
}

export const listRunsSchema = Joi.object<ListRunsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(25),
  status: Joi.string().valid(...RUN_STATUSES),
  source: Joi.string().valid('rest', 'mcp'),
  // Within what Postgres timestamps hold (JavaScript reaches back to 271,821 BC).
  from: Joi.date().iso().min('1900-01-01T00:00:00Z').max('9999-12-31T23:59:59Z'),
  to: Joi.date().iso().min('1900-01-01T00:00:00Z').max('9999-12-31T23:59:59Z'),
  sortBy: Joi.string().valid(...RUN_SORT_FIELDS).default('createdAt'),
  sortOrder: Joi.string().lowercase().valid('asc', 'desc').default('desc'),
});
