import { heartbeat } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { claimJob, finishJob, outcomeOf } from '../../db/documents/job-state';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { artefactKey } from '../../domain/documents/files';
import type { JobOutcome } from '../../domain/documents/job-status';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type { RenderLimits } from '../../domain/templates/template.types';
import { renderDocument } from '../rendering/render-document';
import type { ExcelRenderer } from '../rendering/excel-threads';
import type { PdfRenderer } from '../rendering/pdf-renderer';
import type { ArtefactStorage } from '../storage/storage';

export interface RenderJobDeps {
  db: DataSource;
  storage: ArtefactStorage;
  pdfRenderer: () => PdfRenderer;
  evaluator: Evaluator;
  excelRenderer?: ExcelRenderer;
  limits: RenderLimits;
  imageAllowlist: string[];
}

/**
 * Renders one job and stores its artefact (render task queue). Idempotent, so Temporal may retry it
 * after a worker dies: the job is claimed with a conditional UPDATE, and a job that already ended
 * is reported as it is without rendering again. A template or input problem fails the job (it
 * would fail again); a crash of the browser or storage throws, and Temporal retries.
 */
export function createRenderJobActivity(deps: RenderJobDeps) {
  return async function renderJob(input: { jobId: string }): Promise<JobOutcome> {
    const claimed = await claimJob(deps.db, input.jobId);
    const job = await deps.db.getRepository(DocumentJobEntity).findOneBy({ id: input.jobId });
    if (!job) throw new AppError('ERR_JOB_001', `job ${input.jobId} no longer exists`);
    if (!claimed) return outcomeOf(job);

    const version = await deps.db.getRepository(TemplateVersionEntity).findOneBy({ templateId: job.templateId, version: job.templateVersion });
    if (!version) return finishJob(deps.db, job, { error: new AppError('ERR_TMPL_013', `Template version ${job.templateVersion} no longer exists`) });

    const started = Date.now();
    const beat = setInterval(() => heartbeat(), 2000);
    try {
      const doc = await renderDocument(
        { pdfRenderer: deps.pdfRenderer(), evaluator: deps.evaluator, excelRenderer: deps.excelRenderer, limits: deps.limits, imageAllowlist: deps.imageAllowlist },
        { tenant: job.projectId, template: version.definition, variables: job.variables, format: job.format, watermark: job.billing === 'free', title: job.filename ?? undefined },
      );
      const key = artefactKey(job.projectId, job.id, job.format);
      await deps.storage.put(key, doc.body, doc.contentType);
      return await finishJob(deps.db, job, { artefactKey: key, size: doc.body.length, generationMs: Date.now() - started });
    } catch (err) {
      if (err instanceof AppError) return await finishJob(deps.db, job, { error: err });
      throw err;
    } finally {
      clearInterval(beat);
    }
  };
}
