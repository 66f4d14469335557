import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { insertJobs } from '../../db/documents/job-state';
import { checkMetadata } from '../../domain/documents/metadata';
import { checkOutput } from '../../domain/documents/output';
import { PDF_MAGIC, mergeUploadKey } from '../../domain/documents/merge';
import type { MergePartRecord } from '../../domain/documents/types';
import { AppError } from '../../domain/errors';
import type { MergeInput, MergePartInput } from './merge.schema';
import { newJob, reserve, type Caller, type DocumentDeps, type Generated } from './documents.service';

/**
 * POST /api/documents/merge (docs/documents.md "Merging and appended PDFs"): completed PDF jobs of
 * the project and uploaded PDFs joined into one new job (`kind = 'merge'`, no template). Everything
 * that can be known at once is refused at once: too many parts (ERR_OUTPUT_005), a job of another
 * project or none (ERR_JOB_001), a job that is not a completed PDF with its file (ERR_OUTPUT_006), an
 * upload that is not a PDF (ERR_OUTPUT_003, found while it streams, api/middleware/uploads.ts). The
 * pages are counted and joined in the PDF tools' processes by the job's workflow
 * (activities/documents/merge-job.activity.ts): more than MERGE_MAX_PAGES fails the job (ERR_OUTPUT_005).
 *
 * A merge is one document: it spends one free document (and is watermarked) or one credit, like
 * a generation, given back when it fails or is cancelled.
 */

/** An uploaded file as the multipart parser left it (a temporary file of the request). */
export interface MergeUpload {
  filepath: string;
  size: number;
}

/** The refusal of an upload that is not a PDF, named by its position among the uploaded files. */
export const notAPdf = (upload: number) => new AppError('ERR_OUTPUT_003', `Uploaded file ${upload + 1} is not a PDF (it does not start with ${PDF_MAGIC})`, { field: 'files', upload });

export const tooManyParts = (maxParts: number) => new AppError('ERR_OUTPUT_005', `A merge may have at most ${maxParts} parts`, { limit: maxParts, field: 'parts' });

/**
 * Whether the uploaded file starts with %PDF-. The upload is stopped while it streams once its first
 * bytes say otherwise (documents.routes.ts); a file the parser had finished first (one that came in
 * a single chunk) is refused here.
 */
async function startsLikeAPdf(path: string): Promise<boolean> {
  const file = await open(path).catch(() => undefined);
  if (!file) return false;
  try {
    const head = Buffer.alloc(PDF_MAGIC.length);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.toString('latin1') === PDF_MAGIC;
  } finally {
    await file.close();
  }
}

/** The job parts, checked: the project's own, completed PDFs whose file is still kept. */
async function checkedJobs(deps: DocumentDeps, projectId: string, parts: MergePartInput[]): Promise<Map<string, DocumentJobEntity>> {
  const ids = [...new Set(parts.flatMap((p) => ('jobId' in p ? [p.jobId] : [])))];
  const found = ids.length > 0 ? await deps.db.getRepository(DocumentJobEntity).findBy({ projectId, id: In(ids) }) : [];
  const byId = new Map(found.map((j) => [j.id, j]));
  for (const id of ids) {
    const job = byId.get(id);
    if (!job) throw new AppError('ERR_JOB_001', `Document job ${id} not found`, { jobId: id, field: 'parts' });
    const why =
      job.status !== 'completed' ? `it is ${job.status}` : job.format !== 'pdf' ? `it is a ${job.format} document` : !job.artefactKey || job.artefactExpiredAt ? 'its file is no longer kept' : undefined;
    if (why) throw new AppError('ERR_OUTPUT_006', `Job ${id} cannot be merged: ${why}`, { jobId: id, reason: job.status !== 'completed' ? 'status' : job.format !== 'pdf' ? 'format' : 'expired' });
  }
  return byId;
}

/**
 * Accepts a merge: checks its parts, stores its uploads under the new job's keys, spends its
 * document and inserts the job (workflow started through the outbox like a generation's).
 */
export async function merge(
  deps: DocumentDeps,
  caller: Caller,
  input: MergeInput,
  uploads: MergeUpload[],
  inTransaction?: (m: EntityManager, created: Generated) => Promise<void>,
): Promise<Generated> {
  const { maxParts } = deps.config.rendering.merge;
  if (input.parts.length > maxParts) throw tooManyParts(maxParts);
  const metadata = checkMetadata(input.metadata);
  checkOutput('pdf', input.output);
  if (input.output?.facturx) throw new AppError('ERR_VALID_001', 'A merge has no variables to make an e-invoice from: output.facturx applies to generation only', { field: 'output.facturx' });
  const named = new Set<number>();
  for (const p of input.parts) {
    if (!('upload' in p)) continue;
    if (p.upload >= uploads.length) throw new AppError('ERR_VALID_001', `parts name upload ${p.upload}, but ${uploads.length} file(s) were uploaded`, { field: 'parts', upload: p.upload });
    named.add(p.upload);
  }
  const unused = uploads.findIndex((_, i) => !named.has(i));
  if (unused >= 0) throw new AppError('ERR_VALID_001', `Uploaded file ${unused + 1} is not named by any part ({"upload": ${unused}})`, { field: 'files', upload: unused });
  for (const [i, u] of uploads.entries()) if (!(await startsLikeAPdf(u.filepath))) throw notAPdf(i);
  const jobs = await checkedJobs(deps, caller.projectId, input.parts);

  const jobId = randomUUID();
  const records: MergePartRecord[] = input.parts.map((p, i) => {
    if ('jobId' in p) return { jobId: p.jobId, title: p.title ?? jobs.get(p.jobId)!.filename ?? `Part ${i + 1}` };
    return { upload: p.upload, key: mergeUploadKey(caller.projectId, jobId, p.upload), title: p.title ?? `Part ${i + 1}` };
  });
  const keys = uploads.map((_, i) => mergeUploadKey(caller.projectId, jobId, i));
  await Promise.all(uploads.map((u, i) => deps.storage.put(keys[i], createReadStream(u.filepath), 'application/pdf')));
  try {
    const created = await deps.db.transaction(async (m) => {
      const billing = await reserve(deps, m, caller.projectId, 1, input.useCredit, 'document merge');
      const row = newJob(caller, null, {
        id: jobId,
        kind: 'merge',
        mergeParts: records,
        format: 'pdf',
        variables: {},
        billing,
        metadata: metadata ?? null,
        filename: input.filename ?? null,
        output: input.output ?? null,
      });
      await insertJobs(m, [row]);
      // A merge joins files already made: no queue estimate of renders applies.
      const answer = { job: row, estimatedWaitSeconds: 0 };
      await inTransaction?.(m, answer);
      return answer;
    });
    deps.outbox.start({ kind: 'documentMerge', id: created.job.id, projectId: created.job.projectId });
    return created;
  } catch (err) {
    await Promise.all(keys.map((k) => deps.storage.delete(k)));
    throw err;
  }
}
