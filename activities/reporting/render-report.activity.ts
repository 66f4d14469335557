import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { Context } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import { ReportEntity, type PinnedDefinition } from '../../db/reporting/report.entity';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { AppError } from '../../domain/errors';
import { isUuid } from '../../domain/flow/flow-ids';
import { bindDatasets, rowsNeeded, type DatasetRows, type ResultRow } from '../../domain/reporting/bind-datasets';
import { csvFormatter } from '../../domain/reporting/csv';
import { renderFilename, sanitizeFilename } from '../../domain/reporting/filename-pattern';
import type { Evaluator } from '../../domain/evaluation';
import type { RenderLimits } from '../../domain/templates/template.types';
import { CONTENT_TYPES, renderDocument } from '../rendering/render-document';
import type { ExcelRenderer } from '../rendering/excel-threads';
import type { PdfRenderer } from '../rendering/pdf-renderer';
import type { ArtefactStorage } from '../storage/storage';
import { storedRows } from './stored-rows';

/**
 * The render step of a report run (docs/reporting.md "Report outputs"; design B5.1, B5.7): stored
 * query results → the run's files. PDF and Excel go through the report's pinned template with the
 * existing renderDocument; CSV is written straight from the stored rows, streamed. Runs on the
 * render task queue; a retried attempt writes the same keys again.
 */
export interface RenderReportInput {
  projectId: string;
  runId: string;
  runShortId: string;
  reportId: string;
  /** The published report version to render (reporting_report_versions.version). */
  reportVersion: number;
  /** Resolved report parameter values (filename tokens {param.x}, template variables of the same name). */
  parameters: Record<string, unknown>;
  /** ISO 8601 instant; with `timezone` it feeds {scheduledFor:...} in file names. */
  scheduledFor: string;
  timezone: string;
  /** One entry per dataset of the version: where runDirectQuery stored its gzip NDJSON result. */
  datasets: Array<{ name: string; key: string; rowCount: number; columns: Array<{ name: string; dataType: string }> }>;
  /** The formats to produce (a subset of the version's outputs' formats). */
  formats: Array<'pdf' | 'excel' | 'csv'>;
  /** Free-quota documents carry the watermark (useCredit=false and the project on its free quota). */
  watermark: boolean;
}

export interface RenderedReportOutput {
  format: 'pdf' | 'excel' | 'csv';
  /** csv only: the dataset the file holds (one csv file per dataset). */
  dataset?: string;
  /** Sanitized file name with extension (.pdf, .xlsx, .csv), from the version's filenamePattern. */
  filename: string;
  /** Storage key: reporting/<projectId>/runs/<runId>/outputs/<file-unique-name> */
  key: string;
  contentType: string;
  bytes: number;
  pageCount?: number;
  /** csv: rows written. */
  rowCount?: number;
}

export interface ReportRenderDeps {
  db: DataSource;
  storage: ArtefactStorage;
  pdfRenderer: () => PdfRenderer;
  evaluator: Evaluator;
  excelRenderer?: ExcelRenderer;
  limits: RenderLimits;
  imageAllowlist: string[];
  /** REPORTING_RESULT_MAX_BYTES: no stored result is read past it uncompressed (default 50 MB, as the config's). */
  resultMaxBytes?: number;
  /**
   * REPORTING_MAX_ROWS: a dataset's rows may fill a table however long it is, so a report's loop
   * budget is at least this many iterations (LOOP_MAX_ITERATIONS, 10,000 by default, bounds what
   * a template multiplies out of a request's variables; here the rows come from the project's own
   * query, already capped by it). The Excel row cap and the PDF page cap still bound the file.
   */
  maxRows?: number;
}

type InputDataset = RenderReportInput['datasets'][number];

const DEFAULT_RESULT_MAX_BYTES = 50 * 1024 * 1024;
const HEARTBEAT_MS = 2000;
const RUN_ID = /^[A-Za-z0-9_-]{1,100}$/;
const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';
const MAX_STEM = 120;
const EXTENSIONS = { pdf: 'pdf', excel: 'xlsx', csv: 'csv' } as const;

/** The output folder of a run. */
const outputKey = (projectId: string, runId: string, filename: string) => `reporting/${projectId}/runs/${runId}/outputs/${filename}`;

/** Heartbeats and cancellation of the current activity; nothing outside one (a direct call). */
function activityContext(): { heartbeat: () => void; signal?: AbortSignal } {
  try {
    const ctx = Context.current();
    return { heartbeat: () => ctx.heartbeat(), signal: ctx.cancellationSignal };
  } catch {
    return { heartbeat: () => undefined };
  }
}

function invalid(field: string, message: string): AppError {
  return new AppError('ERR_VALID_001', message, { field });
}

function checkInput(input: RenderReportInput): Date {
  if (!isUuid(input.projectId)) throw invalid('projectId', 'projectId must be a UUID');
  if (!isUuid(input.reportId)) throw new AppError('ERR_RPT_002');
  if (!RUN_ID.test(input.runId)) throw invalid('runId', 'runId must be 1-100 letters, digits, _ or -');
  const scheduledFor = new Date(input.scheduledFor);
  if (Number.isNaN(scheduledFor.getTime())) throw invalid('scheduledFor', 'scheduledFor must be an ISO 8601 instant');
  return scheduledFor;
}

/** A stored result must sit in this run's folder of this project (tenant scoping, design B5.11). */
function checkResultKeys(input: RenderReportInput): void {
  const folder = `reporting/${input.projectId}/runs/${input.runId}/datasets/`;
  for (const d of input.datasets) {
    if (!d.key.startsWith(folder) || d.key.slice(folder.length).includes('/')) throw invalid('datasets', `Dataset ${d.name}'s result is not in this run's folder`);
  }
}

/** Names unique within the run whatever their case: a clash gets `-2`, `-3`, … before the extension. */
function uniqueNamer(): (stem: string, ext: string) => string {
  const taken = new Set<string>();
  return (stem, ext) => {
    let name = `${stem}.${ext}`;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${stem}-${n}.${ext}`;
    taken.add(name.toLowerCase());
    return name;
  };
}

/** `<stem>-<dataset>`, the stem shortened so the dataset's name survives the 120-character cap. */
function datasetStem(stem: string, dataset: string): string {
  const suffix = sanitizeFilename(dataset);
  return sanitizeFilename(`${stem.slice(0, Math.max(1, MAX_STEM - suffix.length - 1))}-${suffix}`);
}

/** The datasets of the csv files: those the version's csv outputs name (all when one names none), in the version's order. */
function csvDatasets(definition: PinnedDefinition): string[] {
  const outputs = definition.outputs.filter((o) => o.format === 'csv');
  const all = definition.datasets.map((d) => d.name);
  if (outputs.length === 0 || outputs.some((o) => !o.datasets || o.datasets.length === 0)) return all;
  const named = new Set(outputs.flatMap((o) => o.datasets ?? []));
  return all.filter((n) => named.has(n));
}

export function createReportRenderActivities(deps: ReportRenderDeps) {
  const maxBytes = deps.resultMaxBytes ?? DEFAULT_RESULT_MAX_BYTES;

  async function load(input: RenderReportInput) {
    const report = await deps.db.getRepository(ReportEntity).findOneBy({ id: input.reportId, projectId: input.projectId });
    const version = report ? await deps.db.getRepository(ReportVersionEntity).findOneBy({ reportId: report.id, version: input.reportVersion }) : null;
    if (!report || !version) throw new AppError('ERR_RPT_002', `Report version ${input.reportVersion} not found`);
    return { report, definition: version.definition };
  }

  async function loadTemplate(definition: PinnedDefinition): Promise<TemplateVersionEntity> {
    const { templateId, templateVersion } = definition;
    const template =
      templateId && templateVersion !== null && isUuid(templateId)
        ? await deps.db.getRepository(TemplateVersionEntity).findOneBy({ templateId, version: templateVersion })
        : null;
    if (!template) throw new AppError('ERR_TMPL_013', `Template version ${templateVersion ?? '(none)'} of the report no longer exists`);
    return template;
  }

  function resultOf(input: RenderReportInput, name: string): InputDataset {
    const found = input.datasets.find((d) => d.name === name);
    if (!found) throw invalid('datasets', `Dataset ${name} has no stored result`);
    return found;
  }

  /** Every dataset's rows, as many as its shape needs. */
  async function readDatasets(input: RenderReportInput, definition: PinnedDefinition, beat: () => void): Promise<DatasetRows[]> {
    const out: DatasetRows[] = [];
    for (const d of definition.datasets) {
      const result = resultOf(input, d.name);
      const rows: ResultRow[] = [];
      for await (const row of storedRows(deps.storage, result.key, { maxBytes, limit: rowsNeeded(d.shape) })) {
        rows.push(row);
        if (rows.length % 10_000 === 0) beat();
      }
      out.push({ name: d.name, shape: d.shape, bindTo: d.bindTo, columns: result.columns, rows });
    }
    return out;
  }

  /** One csv file streamed into storage; the file is never whole in memory. */
  async function writeCsv(result: InputDataset, key: string, ctx: ReturnType<typeof activityContext>): Promise<{ bytes: number; rowCount: number }> {
    const out = new PassThrough();
    // Storage may attach its listeners later (after creating its file): an error destroyed into the stream must not go unhandled.
    out.on('error', () => undefined);
    const stored = deps.storage.put(key, out, CSV_CONTENT_TYPE);
    stored.catch(() => undefined); // awaited below; a failure also ends the writes
    let bytes = 0;
    let rowCount = 0;
    const write = async (text: string) => {
      if (text === '') return;
      const chunk = Buffer.from(text, 'utf8');
      bytes += chunk.length;
      if (out.write(chunk)) return;
      await Promise.race([once(out, 'drain'), stored.then(() => Promise.reject(new Error('CSV storage ended before the file')))]);
    };
    try {
      const format = csvFormatter(result.columns);
      await write(format.header());
      for await (const row of storedRows(deps.storage, result.key, { maxBytes })) {
        if (ctx.signal?.aborted) throw ctx.signal.reason;
        await write(format.row(row));
        if (++rowCount % 5_000 === 0) ctx.heartbeat();
      }
      out.end();
      await stored;
      return { bytes, rowCount };
    } catch (err) {
      out.destroy(err instanceof Error ? err : new Error(String(err)));
      await stored.catch(() => undefined);
      throw err;
    }
  }

  return {
    /**
     * Renders every requested format of one run and stores the files under the run's `outputs/`
     * folder. AppErrors (limits, template problems, a missing version) propagate; the activity
     * failure mapper makes them non-retryable.
     */
    async renderReportOutputs(input: RenderReportInput): Promise<{ outputs: RenderedReportOutput[] }> {
      const scheduledFor = checkInput(input);
      const ctx = activityContext();
      const { report, definition } = await load(input);
      checkResultKeys(input);
      const stem = renderFilename(definition.filenamePattern, {
        slug: report.slug,
        name: report.name,
        runShortId: input.runShortId,
        scheduledFor,
        timezone: input.timezone,
        params: input.parameters,
      });
      const name = uniqueNamer();
      const formats = [...new Set(input.formats)];
      const outputs: RenderedReportOutput[] = [];
      const beat = setInterval(ctx.heartbeat, HEARTBEAT_MS);
      try {
        ctx.heartbeat();
        const documents = formats.filter((f): f is 'pdf' | 'excel' => f !== 'csv');
        if (documents.length > 0) {
          const template = await loadTemplate(definition);
          const datasets = await readDatasets(input, definition, ctx.heartbeat);
          const declared = (template.definition.variables ?? []).map((v) => v.name);
          const variables = bindDatasets(datasets, input.parameters, declared);
          for (const format of documents) {
            const doc = await renderDocument(
              { pdfRenderer: deps.pdfRenderer(), evaluator: deps.evaluator, excelRenderer: deps.excelRenderer, limits: { ...deps.limits, maxLoopIterations: Math.max(deps.limits.maxLoopIterations, deps.maxRows ?? 0) }, imageAllowlist: deps.imageAllowlist },
              { tenant: input.projectId, template: template.definition, variables, format, watermark: input.watermark, title: stem },
            );
            const filename = name(stem, EXTENSIONS[format]);
            const key = outputKey(input.projectId, input.runId, filename);
            await deps.storage.put(key, doc.body, doc.contentType);
            outputs.push({ format, filename, key, contentType: format === 'pdf' ? CONTENT_TYPES.pdf : CONTENT_TYPES.xlsx, bytes: doc.body.length, ...(doc.pageCount === undefined ? {} : { pageCount: doc.pageCount }) });
            ctx.heartbeat();
          }
        }
        if (formats.includes('csv')) {
          const names = csvDatasets(definition);
          for (const dataset of names) {
            const result = resultOf(input, dataset);
            const filename = name(names.length > 1 ? datasetStem(stem, dataset) : stem, EXTENSIONS.csv);
            const key = outputKey(input.projectId, input.runId, filename);
            const written = await writeCsv(result, key, ctx);
            outputs.push({ format: 'csv', dataset, filename, key, contentType: CSV_CONTENT_TYPE, bytes: written.bytes, rowCount: written.rowCount });
          }
        }
        return { outputs };
      } finally {
        clearInterval(beat);
      }
    },
  };
}
