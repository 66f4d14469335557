import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { reserveFreeDocuments, spendCredits } from '../../db/documents/billing';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { insertJobs } from '../../db/documents/job-state';
import type { Queryable } from '../../db/sql';
import { loadPublishedVersion, type PublishedTemplate } from '../../db/templates/template-lookup';
import { estimateWaitSeconds } from '../../domain/documents/files';
import { acceptanceLimits, checkAcceptance } from '../../domain/documents/acceptance';
import { checkMetadata } from '../../domain/documents/metadata';
import { checkOutput } from '../../domain/documents/output';
import { checkSignatureCertificate } from './signing-certificates.service';
import type { Billing, DocumentFormat } from '../../domain/documents/types';
import { AppError } from '../../domain/errors';
import { applyVariableInput } from '../../domain/templates/variables';
import type { Services } from '../../platform/services';
import type { GenerateInput } from './documents.schema';

export type DocumentDeps = Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'storage' | 'config' | 'logger' | 'outbox'>;

/** Who asks: the project, and the API key or user behind the call. */
export interface Caller {
  projectId: string;
  apiKeyId?: string;
  userId?: string;
}

/** The validated body of POST /api/documents/generate (documents.schema.ts), also the MCP tool's input. */
export type { GenerateInput };

/**
 * Loads the published version and checks the requested format against its outputFormats. An
 * unknown template is the spec's generation code, 404 ERR_TMPL_002 ("document template not
 * found"), not the template API's ERR_TMPL_001.
 */
export async function publishedTemplateFor(deps: DocumentDeps, projectId: string, ref: string, format: DocumentFormat): Promise<PublishedTemplate> {
  const published = await loadPublishedVersion(deps.db, projectId, ref).catch((err: unknown) => {
    throw err instanceof AppError && err.code === 'ERR_TMPL_001' ? documentTemplateNotFound(ref) : err;
  });
  // An image is made from the PDF: a template that prints one makes PNGs too.
  if (!published.outputFormats.includes(format === 'png' ? 'pdf' : format)) {
    throw new AppError('ERR_TMPL_009', `This template renders to ${published.outputFormats.join(' and ')} only`, { field: 'format', allowed: published.outputFormats });
  }
  return published;
}

export function documentTemplateNotFound(ref: string): AppError {
  return new AppError('ERR_TMPL_002', undefined, { templateId: ref });
}

/**
 * Variables are checked (required, types) when the request arrives, not when it renders, and so is
 * what the render would refuse (sizes, loops, image hosts; docs/documents.md "Checks at acceptance").
 */
export function checkVariables(deps: Pick<DocumentDeps, 'config'>, published: PublishedTemplate, format: DocumentFormat, variables: Record<string, unknown>, fieldPrefix = ''): void {
  checkAcceptance(published.definition, variables, format, acceptanceLimits(deps.config), fieldPrefix);
  try {
    applyVariableInput(published.definition.variables, variables);
  } catch (err) {
    if (err instanceof AppError && fieldPrefix && err.relatedInfo?.field) {
      const errors = err.relatedInfo.errors as Array<{ path: string }> | undefined;
      throw new AppError(err.code, err.message, {
        ...err.relatedInfo,
        field: `${fieldPrefix}${String(err.relatedInfo.field)}`,
        ...(errors && { errors: errors.map((e) => ({ ...e, path: `${fieldPrefix}${e.path}` })) }),
      });
    }
    throw err;
  }
}

/** Spends what `n` documents cost: credits when asked for, else this month's free quota. */
export async function reserve(deps: DocumentDeps, m: EntityManager, projectId: string, n: number, useCredit: boolean, reason: string): Promise<Billing> {
  if (useCredit) {
    await spendCredits(m, projectId, n, reason);
    return 'credit';
  }
  await reserveFreeDocuments(m, projectId, n, deps.config.documents.freeDocumentsPerMonth);
  return 'free';
}

/** A new queued job of `published`'s version, or (null) of no template: a merge (merge.service.ts). */
export function newJob(caller: Caller, published: PublishedTemplate | null, fields: Partial<DocumentJobEntity> & Pick<DocumentJobEntity, 'format' | 'variables' | 'billing'>): DocumentJobEntity {
  return Object.assign(new DocumentJobEntity(), {
    id: randomUUID(),
    projectId: caller.projectId,
    batchId: null,
    batchIndex: null,
    apiKeyId: caller.apiKeyId ?? null,
    userId: caller.userId ?? null,
    templateId: published?.template.id ?? null,
    templateVersion: published?.version ?? null,
    kind: 'render',
    mergeParts: null,
    status: 'queued',
    metadata: null,
    output: null,
    filename: null,
    attempts: 0,
    artefactKey: null,
    artefactSize: null,
    artefactExpiredAt: null,
    errorCode: null,
    errorMessage: null,
    retryOf: null,
    generationMs: null,
    createdAt: new Date(),
    startedAt: null,
    completedAt: null,
    // A single job's own workflow is started through the outbox (startJobWorkflow); a batch's jobs run in the batch's.
    workflowPending: !fields.batchId,
    workflowStartedAt: null,
    ...fields,
  });
}

export interface Generated {
  job: DocumentJobEntity;
  estimatedWaitSeconds: number;
}

/**
 * Accepts one document. `inTransaction` runs inside the transaction that inserts the job (the
 * Idempotency-Key's answer is stored there, docs/idempotency.md). The job is inserted with
 * `workflow_pending` and its workflow started after commit, in the background: the 202 never waits for Temporal.
 */
export async function generate(deps: DocumentDeps, caller: Caller, input: GenerateInput, inTransaction?: (m: EntityManager, created: Generated) => Promise<void>): Promise<Generated> {
  const metadata = checkMetadata(input.metadata);
  checkOutput(input.format, input.output);
  const published = await publishedTemplateFor(deps, caller.projectId, input.templateId, input.format);
  checkVariables(deps, published, input.format, input.variables);
  await checkSignatureCertificate(deps.db, caller.projectId, input.output);
  const created = await deps.db.transaction(async (m) => {
    const billing = await reserve(deps, m, caller.projectId, 1, input.useCredit, 'document generation');
    const row = newJob(caller, published, { format: input.format, variables: input.variables, billing, metadata: metadata ?? null, filename: input.filename ?? null, output: input.output ?? null });
    await insertJobs(m, [row]);
    if (!inTransaction) return { job: row, estimatedWaitSeconds: undefined };
    const answer = { job: row, estimatedWaitSeconds: await estimateWait(deps, m, row) };
    await inTransaction(m, answer);
    return answer;
  });
  startJobWorkflow(deps, created.job);
  return { job: created.job, estimatedWaitSeconds: created.estimatedWaitSeconds ?? (await estimateWait(deps, deps.db, created.job)) };
}

/**
 * Starts a committed job's workflow in the background (platform/workflow-outbox.ts): retried a
 * few times, and if Temporal stays unreachable (or this process dies first) the job stays
 * `workflow_pending` and a worker's sweep starts it.
 */
export function startJobWorkflow(deps: Pick<DocumentDeps, 'outbox'>, job: Pick<DocumentJobEntity, 'id' | 'projectId'>): void {
  deps.outbox.start({ kind: 'documentJob', id: job.id, projectId: job.projectId });
}

/** From the open jobs ahead and the recent average render time. */
/**
 * The caller's own queue position: its project's other open jobs, at its project's recent pace.
 * Other tenants' jobs never count, so the answer says nothing about anyone else's load.
 */
async function estimateWait(deps: DocumentDeps, db: Queryable, job: Pick<DocumentJobEntity, 'id' | 'projectId'>): Promise<number> {
  const [{ ahead, avg_ms }] = await db.query(
    `SELECT (SELECT count(*)::int FROM document_jobs WHERE project_id = $1 AND status IN ('queued','processing') AND id <> $2) AS ahead,
            (SELECT avg(generation_ms)::float FROM (SELECT generation_ms FROM document_jobs
               WHERE project_id = $1 AND status = 'completed' AND generation_ms IS NOT NULL ORDER BY completed_at DESC LIMIT 50) r) AS avg_ms`,
    [job.projectId, job.id],
  );
  return estimateWaitSeconds(ahead, avg_ms, deps.config.rendering.poolSize);
}

