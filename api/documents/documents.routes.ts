import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { DocumentJobEntity } from '../../db/documents/document-job.entity';
import type { Services } from '../../platform/services';
import { requireProject, type ProjectRequirement, type Scope } from '../middleware/guards';
import { sendExport } from '../export-file';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { mount } from '../openapi/route';
import { validate } from '../validation';
import { acceptedAnswer } from '../accepted';
import { documentAnalytics, documentQuota, periodOf } from './analytics.service';
import { generateBatch, getBatch, type AcceptedBatch } from './batches.service';
import { EXPORT_COLUMNS, exportRow, presentBatch, presentJob } from '../../domain/documents/presenter';
import { documentEndpoints, type DocumentPrefix } from './documents.endpoints';
import { generate, type Caller, type Generated } from './documents.service';
import * as jobs from './jobs.service';
import { AppError } from '../../domain/errors';
import { PDF_MAGIC } from '../../domain/documents/merge';
import { multipartUpload } from '../middleware/uploads';
import { merge, notAPdf, tooManyParts, type MergeUpload } from './merge.service';
import { mergeMultipartSchema, mergeSchema } from './merge.schema';
import { isUuid } from '../../domain/ids';

/** Who may generate and read jobs: these routes' guards and the MCP tools (api/mcp/) use these same rules. */
export const DOCUMENT_ACCESS = {
  generate: { role: 'member', permission: 'generate_documents' },
  read: { role: 'viewer', permission: 'read_documents' },
} as const satisfies Record<string, ProjectRequirement>;

/**
 * Spec "Document generation", mounted under /api/documents and /api/v1/documents. Each route is
 * declared once, in documents.endpoints.ts (api/openapi/route.ts): its operation in the OpenAPI
 * document, its validation and its handler's input type come from that declaration.
 */
export function documentRoutes(services: Services, prefix: DocumentPrefix): Router {
  const { db, config } = services;
  const router = new Router({ prefix });
  const { maxParts } = config.rendering.merge;
  const routes = documentEndpoints(prefix, config.documents.batchMaxDocuments, maxParts);
  const canGenerate = requireProject(db, DOCUMENT_ACCESS.generate);
  const canRead = requireProject(db, DOCUMENT_ACCESS.read);
  const caller = (ctx: Context): Caller => {
    const s = ctx.state.scope as Scope;
    return { projectId: s.projectId, apiKeyId: s.apiKeyId, userId: s.userId };
  };
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;
  const jobId = (ctx: Context) => {
    if (!isUuid(ctx.params.jobId)) throw jobs.notFound();
    return ctx.params.jobId as string;
  };
  /*
   * A job, a batch or a retry job is a created resource: 201 with `Location` at its GET URL and the
   * same absolute `statusUrl` (api/accepted.ts, docs/architecture.md "Accepted work"). The work itself
   * goes on in the background; the status URL follows it.
   * Idempotency-Key (docs/idempotency.md): each stores its answer in the transaction that writes the jobs.
   */
  const idem = idempotent(services);
  const jobUrl = (id: string) => `/api/documents/jobs/${id}`;
  const generated = ({ job, estimatedWaitSeconds }: Generated) => {
    const { status, headers, body } = acceptedAnswer(config.publicUrl, jobUrl(job.id), { jobId: job.id, status: job.status });
    return { status, headers, body: { ...body, estimatedWaitSeconds } };
  };
  const batchAccepted = ({ batch, counts }: AcceptedBatch) => acceptedAnswer(config.publicUrl, `/api/documents/batches/${batch.id}`, { ...presentBatch(batch, counts), documents: undefined });

  mount(router, routes.generate, canGenerate, idem, async (ctx, { body: input }) => {
    const store = answerInTransaction(ctx);
    const result = await generate(services, caller(ctx), input, store && ((m, g) => store(m, generated(g))));
    applyAnswer(ctx, generated(result));
  });

  /*
   * A merge (docs/documents.md "Merging and appended PDFs"): JSON, or multipart with the JSON in the
   * field `request` and the PDFs in `files` (their total within UPLOAD_MAX_BYTES while they stream;
   * one that does not start with %PDF- stops the upload at once, ERR_OUTPUT_003). The handler
   * validates the body itself (multipart fields, or JSON; too many parts before the shape), so the
   * route is mounted without its body schema.
   */
  const mergeUpload = multipartUpload(config.uploads, `${prefix}/merge`, {
    maxFiles: maxParts,
    checkHead: { headBytes: PDF_MAGIC.length, check: (head, file) => (head.toString('latin1', 0, PDF_MAGIC.length) === PDF_MAGIC ? undefined : notAPdf(file.index)) },
  });
  mount(router, { operation: routes.merge.operation }, canGenerate, mergeUpload, idem, async (ctx) => {
    let body: unknown = ctx.request.body;
    let uploads: MergeUpload[] = [];
    if (ctx.is('multipart')) {
      const fields = validate(mergeMultipartSchema, ctx.request.body ?? {});
      try {
        body = JSON.parse(fields.request);
      } catch {
        throw new AppError('ERR_VALID_001', 'The field `request` is not JSON', { field: 'request' });
      }
      const sent = ctx.request.files ?? {};
      const stray = Object.keys(sent).find((name) => name !== 'files');
      if (stray) throw new AppError('ERR_VALID_001', `Send the PDFs in the field \`files\`, not \`${stray}\``, { field: stray });
      const files = sent.files;
      uploads = (Array.isArray(files) ? files : files ? [files] : []).map((f) => ({ filepath: f.filepath, size: f.size }));
    }
    const parts = (body as { parts?: unknown } | null)?.parts;
    if (Array.isArray(parts) && parts.length > maxParts) throw tooManyParts(maxParts);
    const input = validate(mergeSchema(maxParts), body);
    const store = answerInTransaction(ctx);
    const result = await merge(services, caller(ctx), input, uploads, store && ((m, g) => store(m, generated(g))));
    applyAnswer(ctx, generated(result));
  });

  mount(router, routes.generateBatch, canGenerate, idem, async (ctx, { body: input }) => {
    const store = answerInTransaction(ctx);
    const accepted = await generateBatch(services, caller(ctx), input, store && ((m, b) => store(m, batchAccepted(b))));
    applyAnswer(ctx, batchAccepted(accepted));
  });

  mount(router, routes.getBatch, canRead, async (ctx) => {
    if (!isUuid(ctx.params.batchId)) throw jobs.batchNotFound();
    const { batch, counts, documents } = await getBatch(services, projectId(ctx), ctx.params.batchId);
    ctx.body = presentBatch(batch, counts, documents);
  });

  mount(router, routes.listJobs, canRead, async (ctx, { query: q }) => {
    const { jobs: rows, total } = await jobs.listJobs(services, projectId(ctx), q);
    ctx.body = { jobs: await Promise.all(rows.map(async (j) => presentJob(j, await jobs.downloadLink(services, j)))), total, offset: q.offset, limit: q.limit };
  });

  mount(router, routes.exportJobs, canRead, (ctx, { query: q }) => {
    const rows = Readable.from(jobs.exportJobs(services, projectId(ctx), q)).map(exportRow);
    sendExport(ctx, rows, { format: q.format, name: 'jobs', columns: EXPORT_COLUMNS });
  });

  mount(router, routes.bulkDelete, canGenerate, async (ctx, { body: { jobIds } }) => {
    const deleted = await jobs.bulkDeleteJobs(services, projectId(ctx), jobIds);
    ctx.body = { deleted, message: `${deleted} job(s) deleted` };
  });

  mount(router, routes.bulkRetry, canGenerate, async (ctx, { body: { jobIds } }) => {
    const queued = await jobs.bulkRetryJobs(services, caller(ctx), jobIds);
    ctx.body = { queued, message: `${queued} failed job(s) queued again` };
  });

  mount(router, routes.getJob, canRead, async (ctx) => {
    const job = await jobs.findJob(services, projectId(ctx), jobId(ctx));
    ctx.body = presentJob(job, await jobs.downloadLink(services, job));
  });

  mount(router, routes.retryJob, canGenerate, idem, async (ctx) => {
    const retried = (job: Pick<DocumentJobEntity, 'id' | 'status'>) => {
      const { status, headers, body } = acceptedAnswer(config.publicUrl, jobUrl(job.id), { jobId: job.id, status: job.status });
      return { status, headers, body: { ...body, message: `Retrying job ${ctx.params.jobId} as a new job` } };
    };
    const store = answerInTransaction(ctx);
    const job = await jobs.retryJob(services, caller(ctx), jobId(ctx), store && ((m, j) => store(m, retried(j))));
    applyAnswer(ctx, retried(job));
  });

  mount(router, routes.cancelJob, canGenerate, async (ctx) => {
    const job = await jobs.cancelJob(services, projectId(ctx), jobId(ctx));
    ctx.body = { jobId: job.id, status: job.status, message: 'Job cancelled' };
  });

  mount(router, routes.deleteJob, canGenerate, async (ctx) => {
    await jobs.deleteJob(services, projectId(ctx), jobId(ctx));
    ctx.status = 204;
  });

  mount(router, routes.analytics, canRead, async (ctx, { query: q }) => {
    ctx.body = await documentAnalytics(services, projectId(ctx), periodOf(q));
  });

  mount(router, routes.quota, canRead, async (ctx) => {
    ctx.body = await documentQuota(services, projectId(ctx));
  });

  return router;
}
