import { Context, heartbeat } from '@temporalio/activity';
import pLimit from 'p-limit';
import type { DataSource } from 'typeorm';
import type { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { claimJobs, finishJob, outcomeOf } from '../../db/documents/job-state';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { artefactKey } from '../../domain/documents/files';
import type { JobOutcome } from '../../domain/documents/job-status';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type { RenderLimits, TemplateDefinition } from '../../domain/templates/template.types';
import { renderDocument, type RenderDeps } from '../../adapters/rendering/render-document';
import type { ExcelRenderer } from '../../adapters/rendering/excel-threads';
import type { PdfRenderer } from '../../adapters/rendering/pdf-renderer';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { createJobCompletions } from './job-completions';
import type { AssetLoader } from '../../adapters/rendering/render-assets';
import { withHeartbeat } from '../heartbeat';

export interface RenderJobDeps {
  db: DataSource;
  storage: ArtefactStorage;
  pdfRenderer: () => PdfRenderer;
  evaluator: Evaluator;
  excelRenderer?: ExcelRenderer;
  limits: RenderLimits;
  imageAllowlist: string[];
  /** The project's images and fonts a template names (render-assets.ts). */
  assets?: AssetLoader;
  /** Finishing steps of `output` (pdf-tools/), signing certificates, the outbound allowlist. */
  pdfTools?: RenderDeps['pdfTools'];
  signing?: RenderDeps['signing'];
  outboundAllowlist?: string[];
}

/** What a batch's group render is given: its jobs, and how many of them render at once. */
export interface RenderJobsInput {
  jobIds: string[];
  concurrency: number;
}

/**
 * The document renders of the render task queue. Both are idempotent, so Temporal may retry them
 * after a worker dies: jobs are claimed with a conditional UPDATE, and a job that already ended is
 * reported as it is without rendering again. A template or input problem fails the job (it would
 * fail again); a crash of the browser or storage throws, and Temporal retries.
 *
 * Cancellable: the heartbeat carries a cancellation (the workflow was cancelled, or this worker's
 * shutdown grace time ran out), which closes the Chromium pages or ends the Excel threads and
 * stores nothing. A job cancelled without its render being told (a batch's job) does not complete:
 * its file, stored meanwhile, is removed again.
 */
export function createRenderJobActivities(deps: RenderJobDeps) {
  const completions = createJobCompletions(deps.db);
  const versions = deps.db.getRepository(TemplateVersionEntity);

  /** Renders a claimed job, stores its file and completes it; its outcome. Throws what a retry may mend. */
  async function renderClaimed(job: DocumentJobEntity, template: TemplateDefinition | undefined, signal: AbortSignal): Promise<JobOutcome> {
    if (!template) return finishJob(deps.db, job, { error: new AppError('ERR_TMPL_013', `Template version ${job.templateVersion} no longer exists`) });
    const started = Date.now();
    try {
      const doc = await renderDocument(
        { ...deps, pdfRenderer: deps.pdfRenderer() },
        { tenant: job.projectId, template, variables: job.variables, format: job.format, output: job.output, watermark: job.billing === 'free', title: job.filename ?? undefined, signal },
      );
      signal.throwIfAborted();
      const key = artefactKey(job.projectId, job.id, job.format, doc.fileExtension);
      await deps.storage.put(key, doc.body, doc.contentType);
      if (await completions.complete({ job, artefactKey: key, size: doc.body.length, generationMs: Date.now() - started })) return { jobId: job.id, status: 'completed' };
      // Cancelled (or deleted) while it rendered or its file was being stored: the file belongs to no job.
      await deps.storage.delete(key);
      const now = await deps.db.query(`SELECT status, error_message FROM document_jobs WHERE id = $1`, [job.id]);
      return now[0] ? outcomeOf({ ...job, status: now[0].status, errorMessage: now[0].error_message }) : { jobId: job.id, status: 'cancelled' };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof AppError) return finishJob(deps.db, job, { error: err });
      throw err;
    }
  }

  /** The template definitions of the claimed jobs' versions, in one query: `templateId:version` → definition. */
  async function templatesOf(jobs: DocumentJobEntity[]): Promise<Map<string, TemplateDefinition>> {
    // A merge job (no template) never reaches a render: its workflow is another (merge-job.activity.ts).
    const rendered = jobs.filter((j): j is DocumentJobEntity & { templateId: string; templateVersion: number } => j.templateId !== null && j.templateVersion !== null);
    const wanted = new Map(rendered.map((j) => [`${j.templateId}:${j.templateVersion}`, { templateId: j.templateId, version: j.templateVersion }]));
    if (wanted.size === 0) return new Map();
    const found = await versions.findBy([...wanted.values()]);
    return new Map(found.map((v) => [`${v.templateId}:${v.version}`, v.definition]));
  }
  const templateOf = (templates: Map<string, TemplateDefinition>, job: DocumentJobEntity) => templates.get(`${job.templateId}:${job.templateVersion}`);

  /** Renders one job (a single generation's workflow). */
  async function renderJob(input: { jobId: string }): Promise<JobOutcome> {
    const { claimed, ended } = await claimJobs(deps.db, [input.jobId]);
    if (ended.length > 0) return outcomeOf(ended[0]);
    if (claimed.length === 0) throw new AppError('ERR_JOB_001', `job ${input.jobId} no longer exists`);
    const { cancellationSignal: signal } = Context.current();
    return withHeartbeat(() => heartbeat(), 2000, async () => renderClaimed(claimed[0], templateOf(await templatesOf(claimed), claimed[0]), signal));
  }

  /**
   * Renders a group of a batch's jobs, `concurrency` at a time, and reports each one's outcome (a
   * job deleted meanwhile has none). Its heartbeat carries the progress. A render that throws does
   * not stop the others: the group's jobs are all tried, then the activity throws the first error,
   * and Temporal's retry renders only what did not end (a kill of the worker, the same).
   */
  async function renderJobs(input: RenderJobsInput): Promise<JobOutcome[]> {
    const { claimed, ended } = await claimJobs(deps.db, input.jobIds);
    const outcomes = new Map(ended.map((j) => [j.id, outcomeOf(j)]));
    const templates = await templatesOf(claimed);
    const { cancellationSignal: signal } = Context.current();
    const progress = () => ({ ended: outcomes.size, of: input.jobIds.length });
    let failure: Error | undefined;
    const limit = pLimit(Math.max(1, input.concurrency));
    // Once cancelled, no render begins: the jobs still queued end at once.
    const renderOne = async (job: (typeof claimed)[number]) => {
      if (signal.aborted) return;
      try {
        outcomes.set(job.id, await renderClaimed(job, templateOf(templates, job), signal));
        heartbeat(progress());
      } catch (err) {
        failure ??= err instanceof Error ? err : new Error(String(err));
      }
    };
    await withHeartbeat(() => heartbeat(progress()), 2000, () => Promise.all(claimed.map((job) => limit(() => renderOne(job)))));
    if (signal.aborted) throw signal.reason;
    if (failure !== undefined) throw failure;
    return input.jobIds.flatMap((id) => outcomes.get(id) ?? []);
  }

  return { renderJob, renderJobs };
}
