import { Context, heartbeat } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import type { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { claimJobs, finishJob, outcomeOf } from '../../db/documents/job-state';
import { artefactKey } from '../../domain/documents/files';
import type { JobOutcome } from '../../domain/documents/job-status';
import { mergeUploadKey } from '../../domain/documents/merge';
import { needsFinishing } from '../../domain/documents/output';
import { AppError } from '../../domain/errors';
import type { MergeLimits, MergePart, PdfTools, SigningMaterial } from '../../adapters/rendering/pdf-tools/pdf-tools';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { withHeartbeat } from '../heartbeat';

/**
 * A merge job's work on the render queue (POST /api/documents/merge; docs/documents.md "Merging and
 * appended PDFs"): its parts read from storage (each job part checked again: still the project's
 * completed PDF with its file), joined in the PDF tools' processes (a bookmark per part, page labels
 * kept, MERGE_MAX_PAGES found before any page is copied), finished as its `output` asks (PDF/A,
 * signature, encryption: the steps of a generation), stored, and completed. Idempotent like a render:
 * the job is claimed with a conditional UPDATE and one that ended is reported as it is.
 *
 * A part that can no longer be read, a PDF the tools refuse, a limit: the job fails (its document or
 * credit comes back). A crash of storage or of the tools' process throws, and Temporal retries.
 */

interface MergeJobDeps {
  db: DataSource;
  storage: ArtefactStorage;
  pdfTools?: PdfTools;
  signing?: (projectId: string, certificateId: string) => Promise<SigningMaterial>;
  outboundAllowlist?: string[];
  /** MERGE_MAX_PAGES and MERGE_MAX_PARTS. */
  merge: { maxPages: number; maxParts: number };
  /** RENDER_OUTPUT_MAX_BYTES: the parts together, and the merged file, are at most this (ERR_LIMIT_011). */
  maxOutputBytes: number;
}

const tooLarge = (max: number, size: number, what: string) => new AppError('ERR_LIMIT_011', `${what} is over the limit of ${max} bytes`, { limit: max, size });

export function createMergeJobActivities(deps: MergeJobDeps) {
  /** The bytes under `key`, counted against `budget.left` while they stream. */
  async function readPart(key: string, budget: { left: number }): Promise<Buffer> {
    const stored = await deps.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of stored.body as AsyncIterable<Buffer>) {
      budget.left -= chunk.length;
      if (budget.left < 0) {
        stored.body.destroy();
        throw tooLarge(deps.maxOutputBytes, deps.maxOutputBytes - budget.left, 'The parts of the merge together');
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  /** A job part's file key, if the job is still the project's completed PDF with its file; ERR_OUTPUT_006 otherwise. */
  async function jobPartKey(job: DocumentJobEntity, partJobId: string): Promise<string> {
    const rows: Array<{ artefact_key: string | null; status: string; format: string; artefact_expired_at: Date | null }> = await deps.db.query(
      `SELECT artefact_key, status, format, artefact_expired_at FROM document_jobs WHERE id = $1 AND project_id = $2`,
      [partJobId, job.projectId],
    );
    const part = rows[0];
    if (!part || part.status !== 'completed' || part.format !== 'pdf' || !part.artefact_key || part.artefact_expired_at) {
      throw new AppError('ERR_OUTPUT_006', `Job ${partJobId} can no longer be merged: ${part ? 'its file is no longer kept' : 'it was deleted'}`, { jobId: partJobId });
    }
    return part.artefact_key;
  }

  async function mergeClaimed(job: DocumentJobEntity, signal: AbortSignal): Promise<JobOutcome> {
    const started = Date.now();
    const tools = deps.pdfTools;
    if (!tools) throw new Error('This worker has no PDF tools (MergeJobDeps.pdfTools)');
    try {
      const records = job.mergeParts ?? [];
      if (records.length > deps.merge.maxParts) throw new AppError('ERR_OUTPUT_005', `A merge may have at most ${deps.merge.maxParts} parts`, { limit: deps.merge.maxParts, field: 'parts' });
      const budget = { left: deps.maxOutputBytes };
      const parts: MergePart[] = [];
      for (const record of records) {
        const key = 'jobId' in record ? await jobPartKey(job, record.jobId) : record.key;
        parts.push({ title: record.title, pdf: await readPart(key, budget) });
        signal.throwIfAborted();
      }
      const options: MergeLimits = { maxPages: deps.merge.maxPages, watermark: job.billing === 'free' };
      let { pdf } = await tools.merge(parts, options, signal);
      const output = job.output ?? {};
      if (needsFinishing(output)) {
        const { signature } = output;
        if (signature && !deps.signing) throw new Error('This worker cannot open signing certificates (MergeJobDeps.signing)');
        const signing = signature ? await deps.signing!(job.projectId, signature.certificateId) : undefined;
        pdf = await tools.finish(pdf, { output, title: job.filename ?? undefined, createdAt: new Date().toISOString(), signing, outboundAllowlist: deps.outboundAllowlist }, signal);
      }
      if (pdf.length > deps.maxOutputBytes) throw tooLarge(deps.maxOutputBytes, pdf.length, 'The merged document');
      signal.throwIfAborted();
      const key = artefactKey(job.projectId, job.id, 'pdf');
      await deps.storage.put(key, pdf, 'application/pdf');
      const outcome = await finishJob(deps.db, job, { artefactKey: key, size: pdf.length, generationMs: Date.now() - started });
      // Cancelled (or deleted) meanwhile: the file belongs to no job.
      if (outcome.status !== 'completed') await deps.storage.delete(key);
      return outcome;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof AppError) {
        if (err.code === 'ERR_FILE_001') return finishJob(deps.db, job, { error: new AppError('ERR_OUTPUT_006', 'A part of the merge is no longer stored') });
        return finishJob(deps.db, job, { error: err });
      }
      throw err;
    }
  }

  return {
    /** Merges one job (its workflow: workflows/documents/merge-document.workflow.ts). */
    async mergeJob(input: { jobId: string }): Promise<JobOutcome> {
      const { claimed, ended } = await claimJobs(deps.db, [input.jobId]);
      if (ended.length > 0) return outcomeOf(ended[0]);
      if (claimed.length === 0) throw new AppError('ERR_JOB_001', `job ${input.jobId} no longer exists`);
      const { cancellationSignal: signal } = Context.current();
      return withHeartbeat(() => heartbeat(), 2000, () => mergeClaimed(claimed[0], signal));
    },

    /**
     * Removes a merge's uploaded PDFs once it ended (or was cancelled or deleted). A job that is gone
     * no longer says which it had: every key a merge may have had is removed (deleting a missing key succeeds).
     */
    async discardMergeUploads(input: { jobId: string; projectId: string }): Promise<void> {
      const rows: Array<{ merge_parts: Array<{ key?: string }> | null }> = await deps.db.query(`SELECT merge_parts FROM document_jobs WHERE id = $1`, [input.jobId]);
      const keys = rows[0]
        ? (rows[0].merge_parts ?? []).flatMap((p) => (p.key ? [p.key] : []))
        : Array.from({ length: deps.merge.maxParts }, (_, i) => mergeUploadKey(input.projectId, input.jobId, i));
      for (const key of keys) await deps.storage.delete(key);
    },
  };
}
export type MergeJobActivities = ReturnType<typeof createMergeJobActivities>;
