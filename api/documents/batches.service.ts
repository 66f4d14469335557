import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { batchCounts, type BatchCounts } from '../../db/documents/batch-counts';
import { insertBatch } from '../../db/documents/batch-state';
import { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { insertJobs } from '../../db/documents/job-state';
import { checkArchiveRequest } from '../../domain/documents/batch-archive';
import { batchArchiveLink, jobDownloadLink } from '../../domain/documents/document-events';
import { checkMetadata, mergeMetadata } from '../../domain/documents/metadata';
import { checkOutput } from '../../domain/documents/output';
import { checkSignatureCertificate } from './signing-certificates.service';
import { AppError } from '../../domain/errors';
import type { BatchInput } from './documents.schema';
import { checkVariables, newJob, publishedTemplateFor, reserve, type Caller, type DocumentDeps } from './documents.service';

const INSERT_CHUNK = 500;

/**
 * Accepts a batch: every document is checked first (nothing is accepted if one is invalid), the
 * whole batch is paid for at once, the batch (marked `workflow_pending`) and its jobs are written in
 * one transaction, and one workflow (id = batch id), started after commit, renders them.
 */
export interface AcceptedBatch {
  batch: DocumentBatchEntity;
  counts: BatchCounts;
}

/** `inTransaction` runs in the transaction that writes the batch and its jobs (the Idempotency-Key's answer, docs/idempotency.md). */
export async function generateBatch(deps: DocumentDeps, caller: Caller, input: BatchInput, inTransaction?: (m: EntityManager, accepted: AcceptedBatch) => Promise<void>): Promise<AcceptedBatch> {
  const batchMetadata = checkMetadata(input.metadata);
  checkOutput(input.format, input.output, { batch: true });
  // Before the documents are read one by one: a ZIP of 10,000 documents is refused at once.
  checkArchiveRequest(input.format, input.output, input.documents.length, deps.config.documents.archive.maxDocuments);
  const published = await publishedTemplateFor(deps, caller.projectId, input.templateId, input.format);
  await checkSignatureCertificate(deps.db, caller.projectId, input.output);
  const docs = input.documents.map((d, i) => {
    checkVariables(deps, published, input.format, d.variables, `documents[${i}].variables.`);
    return { ...d, metadata: mergeMetadata(batchMetadata, checkMetadata(d.metadata, `documents[${i}].metadata`), `documents[${i}].metadata`) };
  });

  const batch = Object.assign(new DocumentBatchEntity(), {
    id: randomUUID(),
    projectId: caller.projectId,
    templateId: published.template.id,
    format: input.format,
    status: 'processing' as const,
    totalJobs: docs.length,
    metadata: batchMetadata ?? null,
    output: input.output ?? null,
    apiKeyId: caller.apiKeyId ?? null,
    createdAt: new Date(),
    completedAt: null,
    workflowPending: true,
    workflowStartedAt: null,
    archiveStatus: input.output?.archive ? ('pending' as const) : null,
  });
  const accepted: AcceptedBatch = { batch, counts: { completedJobs: 0, failedJobs: 0, cancelledJobs: 0, openJobs: docs.length } };
  await deps.db.transaction(async (m) => {
    const billing = await reserve(deps, m, caller.projectId, docs.length, input.useCredit, `batch ${batch.id}`);
    await insertBatch(m, batch);
    const jobs = docs.map((d, i) =>
      newJob(caller, published, { format: input.format, variables: d.variables, billing, metadata: d.metadata ?? null, filename: d.filename ?? null, batchId: batch.id, batchIndex: i, output: input.output ?? null }),
    );
    for (let i = 0; i < jobs.length; i += INSERT_CHUNK) await insertJobs(m, jobs.slice(i, i + INSERT_CHUNK));
    await inTransaction?.(m, accepted);
  });
  // Off the request path, through the outbox (platform/workflow-outbox.ts): a worker's sweep starts a batch this process could not.
  deps.outbox.start({ kind: 'documentBatch', id: batch.id, projectId: batch.projectId });
  return accepted;
}

export async function getBatch(deps: DocumentDeps, projectId: string, batchId: string) {
  const batch = await deps.db.getRepository(DocumentBatchEntity).findOneBy({ id: batchId, projectId });
  if (!batch) throw new AppError('ERR_BATCH_001');
  const jobs = await deps.db.getRepository(DocumentJobEntity).find({
    where: { batchId },
    order: { batchIndex: 'ASC' },
    select: { id: true, status: true, artefactKey: true, artefactExpiredAt: true, filename: true, format: true },
  });
  const documents = await Promise.all(
    jobs.map(async (j) => ({ jobId: j.id, status: j.status, downloadUrl: (await jobDownloadLink(deps.storage, deps.config.storage.downloadUrlTtlSeconds, j))?.url })),
  );
  // The archive's link beside the record, as presentBatch reads it (docs/documents.md "Batch archives").
  const archiveLink = await batchArchiveLink(deps.storage, deps.config.storage.downloadUrlTtlSeconds, batch);
  return { batch: Object.assign(batch, { archiveLink }), counts: await batchCounts(deps.db, batchId), documents };
}
