import Joi from 'joi';
import { FILENAME_PATTERN } from '../../domain/documents/files';
import { JOB_STATUSES } from '../../domain/documents/job-status';
import { outputSchema } from './output.schema';

const templateRef = Joi.string().trim().min(1).max(200);
const format = Joi.string().valid('pdf', 'excel', 'png');
const filename = Joi.string().trim().pattern(FILENAME_PATTERN).max(200);
/** Checked in detail by checkMetadata (flat, 10 KB, scalar values). */
const metadata = Joi.object().unknown(true);

export const generateSchema = Joi.object({
  templateId: templateRef.required(),
  format: format.required(),
  variables: Joi.object().unknown(true).required(),
  filename,
  metadata,
  useCredit: Joi.boolean().default(false),
  output: outputSchema,
});

export const batchSchema = (maxDocuments: number) =>
  Joi.object({
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

export const listJobsSchema = Joi.object({
  offset: Joi.number().integer().min(0).default(0),
  limit: Joi.number().integer().min(1).max(100).default(20),
  status: Joi.string().valid(...JOB_STATUSES),
  /** Id, shortId or slug (jobs.service.ts listJobs). */
  templateId: templateRef,
  batchId: Joi.string().uuid(),
});

export const exportJobsSchema = Joi.object({
  format: Joi.string().valid('csv', 'json').default('csv'),
  startDate: Joi.date().iso(),
  endDate: Joi.date().iso(),
  status: Joi.string().valid(...JOB_STATUSES),
});

export const jobIdsSchema = Joi.object({ jobIds: Joi.array().items(Joi.string().uuid()).min(1).max(1000).unique().required() });

export const analyticsSchema = Joi.object({ startDate: Joi.date().iso(), endDate: Joi.date().iso() });

export const noQuerySchema = Joi.object({});
