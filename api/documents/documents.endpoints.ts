import { noContent, ok } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { operationsOf, routeTable } from '../openapi/route';
import * as schema from './documents.schema';
import { mergeSchema } from './merge.schema';

/**
 * The document generation routes' declarations (docs/architecture.md "One declaration per route"),
 * mounted by documents.routes.ts under both /api/documents and /api/v1/documents: `prefix` is the
 * one, `batchMaxDocuments` the configured batch limit, `mergeMaxParts` MERGE_MAX_PARTS. Apart from the
 * handlers, so that the OpenAPI document is built without loading the services.
 */
const jobId = { jobId: 'The job id (UUID)' };
const accepted = { type: 'object', required: ['jobId', 'status', 'statusUrl'], properties: { jobId: { type: 'string', format: 'uuid' }, status: { type: 'string' }, statusUrl: { type: 'string', format: 'uri' }, estimatedWaitSeconds: { type: 'number' } } };
/** A new job of generate or merge: with its estimated wait (a retry answers without one). */
const queued = { ...accepted, required: [...accepted.required, 'estimatedWaitSeconds'] };
const counted = (field: string) => ({ type: 'object', required: [field, 'message'], properties: { [field]: { type: 'integer' }, message: { type: 'string' } }, additionalProperties: false });
const cancelled = { type: 'object', required: ['jobId', 'status', 'message'], properties: { jobId: { type: 'string', format: 'uuid' }, status: { type: 'string' }, message: { type: 'string' } }, additionalProperties: false };

export const DOCUMENT_PREFIXES = ['/api/documents', '/api/v1/documents'] as const;
export type DocumentPrefix = (typeof DOCUMENT_PREFIXES)[number];

// Static paths before /:jobId ones, which would otherwise take "export" or "bulk" for a job id.
export function documentEndpoints(prefix: DocumentPrefix, batchMaxDocuments: number, mergeMaxParts = 50) {
  const route = routeTable(prefix === '/api/documents' ? 'Documents' : 'Documents (v1)');
  return {
    generate: route('post', `${prefix}/generate`, 'Generate a document from a published template', {
      description: 'Answers 201 at once with the job; rendering goes on in the background (follow `statusUrl`, or a webhook). API keys need `generate_documents`.',
      security: 'project',
      idempotent: true,
      request: { body: schema.generateSchema, example: { templateId: 'invoice', format: 'pdf', variables: { customer: 'Ada', total: 42 }, filename: 'invoice-17' } },
      responses: { 201: { ...ok('The job, queued', queued, { jobId: '9b2e…', status: 'queued', statusUrl: 'https://formwork.example/api/documents/jobs/9b2e…', estimatedWaitSeconds: 2 }), headers: { Location: 'The job\'s status URL' } } },
    }),
    /** Its body, JSON or multipart, is validated by its handler (documents.routes.ts): mount it without the body schema. */
    merge: route('post', `${prefix}/merge`, 'Merge completed PDF jobs and uploaded PDFs into one document', {
      description:
        'Answers 201 at once with a new job (no template: `templateId` null, `kind` "merge"); the parts are joined in the background, a bookmark per part, their page labels kept. ' +
        'JSON, or multipart/form-data with this JSON in the field `request` and the PDFs in the field `files` (`{"upload": n}` names the n-th, from 0). ' +
        'One document of the quota or one credit. Refused at once: more parts than MERGE_MAX_PARTS (ERR_OUTPUT_005), a job of another project (ERR_JOB_001), a job that is not a completed PDF with its file (ERR_OUTPUT_006), an upload that is not a PDF (ERR_OUTPUT_003). ' +
        'More pages than MERGE_MAX_PAGES fails the job (ERR_OUTPUT_005). docs/documents.md "Merging and appended PDFs".',
      security: 'project',
      idempotent: true,
      request: {
        body: mergeSchema(mergeMaxParts),
        example: { parts: [{ jobId: '9b2e7c1a-4f3d-4c2b-9a8e-1f2d3c4b5a6e', title: 'Invoice' }, { upload: 0, title: 'Terms' }], filename: 'invoice-with-terms' },
        otherContent: {
          'multipart/form-data': {
            type: 'object',
            required: ['request'],
            properties: {
              request: { type: 'string', contentMediaType: 'application/json', description: 'The merge request (the JSON body\'s fields)' },
              files: { type: 'array', items: { type: 'string', contentMediaType: 'application/pdf' }, description: 'The uploaded PDFs, in the order `{"upload": n}` names them' },
            },
          },
        },
      },
      responses: { 201: { ...ok('The merge job, queued', queued), headers: { Location: 'The job\'s status URL' } } },
    }),
    generateBatch: route('post', `${prefix}/generate/batch`, 'Generate many documents in one batch', { security: 'project', idempotent: true, request: { body: schema.batchSchema(batchMaxDocuments) }, responses: { 201: { ...ok('The batch, queued', resource('AcceptedDocumentBatch')), headers: { Location: 'The batch\'s status URL' } } } }),
    getBatch: route('get', `${prefix}/batches/:batchId`, 'Status of a batch and its documents', { security: 'project', request: { params: { batchId: 'The batch id' } }, responses: { 200: ok('The batch', resource('DocumentBatch')) } }),
    listJobs: route('get', `${prefix}/jobs`, 'List document jobs', { security: 'project', request: { query: schema.listJobsSchema }, responses: { 200: ok('A page of jobs', resource('DocumentJobList')) } }),
    exportJobs: route('get', `${prefix}/jobs/export`, 'Export document jobs (CSV or JSON)', { security: 'project', request: { query: schema.exportJobsSchema }, responses: { 200: { description: 'The export file', contentType: 'text/csv', schema: { type: 'string' } } } }),
    bulkDelete: route('delete', `${prefix}/jobs/bulk`, 'Delete many jobs', { security: 'project', request: { body: schema.jobIdsSchema }, responses: { 200: ok('How many were deleted', counted('deleted')) } }),
    bulkRetry: route('post', `${prefix}/jobs/bulk/retry`, 'Queue many failed jobs again', { security: 'project', request: { body: schema.jobIdsSchema }, responses: { 200: ok('How many were queued', counted('queued')) } }),
    getJob: route('get', `${prefix}/jobs/:jobId`, 'Status of a job (with a download link once done)', { security: 'project', request: { params: jobId }, responses: { 200: ok('The job', resource('DocumentJob')) } }),
    retryJob: route('post', `${prefix}/jobs/:jobId/retry`, 'Retry a failed job as a new job', { security: 'project', idempotent: true, request: { params: jobId }, responses: { 201: ok('The new job', accepted) } }),
    cancelJob: route('post', `${prefix}/jobs/:jobId/cancel`, 'Cancel a queued or running job', { security: 'project', request: { params: jobId }, responses: { 200: ok('Cancelled', cancelled) } }),
    deleteJob: route('delete', `${prefix}/jobs/:jobId`, 'Delete a job and its file', { security: 'project', request: { params: jobId }, responses: { 204: noContent } }),
    analytics: route('get', `${prefix}/analytics`, 'Document generation analytics', {
      description: 'Documents requested between `startDate` and `endDate` (default the last 30 days): totals, per status, format, UTC day and template.',
      security: 'project',
      request: { query: schema.analyticsSchema },
      responses: { 200: ok('Counts and timings', resource('DocumentAnalytics')) },
    }),
    quota: route('get', `${prefix}/quota`, 'Free documents this month and credits left', {
      security: 'project',
      request: { query: schema.noQuerySchema },
      responses: { 200: ok('The quota and the credit balance', resource('DocumentQuota')) },
    }),
  };
}

/** The OpenAPI operations of these routes under both prefixes (api/openapi/operations.ts). */
export function documentOperations(batchMaxDocuments: number, mergeMaxParts = 50) {
  return DOCUMENT_PREFIXES.flatMap((prefix) => operationsOf(documentEndpoints(prefix, batchMaxDocuments, mergeMaxParts)));
}
