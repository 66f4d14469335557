import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { Context } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import { ReportEntity, type PinnedDefinition } from '../../db/reporting/report.entity';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { AppError } from '../../domain/errors';
import { checkAcceptance, type AcceptanceLimits } from '../../domain/documents/acceptance';
import { bindDatasets, numberConverter, rowsNeeded, type DatasetRows, type ResultRow } from '../../domain/reporting/bind-datasets';
import { csvStream } from '../../domain/reporting/csv';
import { renderFilename, sanitizeFilename } from '../../domain/reporting/filename-pattern';
import type { Evaluator } from '../../domain/evaluation';
import type { RenderLimits, TemplateDefinition, TemplateVariable } from '../../domain/templates/template.types';
import { resolveArrayElement } from '../../domain/templates/variables';
import { canStreamVariable, type RowSource } from '../../adapters/rendering/excel-renderer';
import { CONTENT_TYPES, renderDocument, streamExcelDocument, type RenderDeps } from '../../adapters/rendering/render-document';
import type { ExcelRenderer } from '../../adapters/rendering/excel-threads';
import type { PdfRenderer } from '../../adapters/rendering/pdf-renderer';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { storedRows } from './stored-rows';
import { pdfOutputOf } from '../../domain/reporting/report-output';
import type { AssetLoader } from '../../adapters/rendering/render-assets';
import { isUuid } from '../../domain/ids';
import { withHeartbeat } from '../heartbeat';

/**
 * The render step of a report run (docs/reporting.md "Report outputs", "How the parts fit", "Temporal workflows"):
 * stored query results → the run's files. PDF and Excel go through the report's pinned template with the
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
  /** The project's images and fonts a template names (render-assets.ts). */
  assets?: AssetLoader;
  /** A pdf output's `output` options: the PDF tools, signing certificates, the outbound allowlist (render-document.ts). */
  pdfTools?: RenderDeps['pdfTools'];
  signing?: RenderDeps['signing'];
  outboundAllowlist?: string[];
  /** REPORTING_RESULT_MAX_BYTES: no stored result is read past it uncompressed (default 50 MB, as the config's). */
  resultMaxBytes?: number;
  /**
   * REPORTING_MAX_ROWS: a dataset's rows may fill a table however long it is, so a report's loop
   * budget is at least this many iterations (LOOP_MAX_ITERATIONS, 10,000 by default, bounds what
   * a template multiplies out of a request's variables; here the rows come from the project's own
   * query, already capped by it). The Excel row cap and the PDF page cap still bound the file.
   */
  maxRows?: number;
  /**
   * The checks a document's variables pass before its render starts (docs/documents.md "Checks at
   * acceptance"), with the report's loop budget (above) and no cap on the variables' total size (the
   * rows are the project's own, capped by REPORTING_MAX_ROWS and REPORTING_RESULT_MAX_BYTES).
   */
  acceptance?: AcceptanceLimits;
}

type InputDataset = RenderReportInput['datasets'][number];

/** The acceptance limits of a report's render: its loop budget, and no total-size cap (ReportRenderDeps.acceptance). */
function reportAcceptance(limits: AcceptanceLimits, maxLoopIterations: number): AcceptanceLimits {
  return { ...limits, maxLoopIterations, maxVariablesBytes: Number.POSITIVE_INFINITY };
}

const DEFAULT_RESULT_MAX_BYTES = 50 * 1024 * 1024;
const HEARTBEAT_MS = 2000;
/** CSV text gathered before one write to storage. */
const CSV_CHUNK = 64 * 1024;
const RUN_ID = /^[A-Za-z0-9_-]{1,100}$/;
const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';
const MAX_STEM = 120;
const EXTENSIONS = { pdf: 'pdf', excel: 'xlsx', csv: 'csv' } as const;
/** Stored rows per batch a streamed Excel table asks for (one structured clone to its thread: a few ms). */
const SOURCE_BATCH = 2_000;

/**
 * The `rows` datasets an Excel output can stream from storage instead of holding (variable →
 * dataset): the template calculates nothing (a calculated variable may read any rows), no constant
 * shadows the variable, it is declared as an array if at all, and only section-level tables name
 * it (canStreamVariable). The others are read into memory as before.
 */
function streamableDatasets(definition: PinnedDefinition, template: TemplateDefinition): Map<string, PinnedDefinition['datasets'][number]> {
  const out = new Map<string, PinnedDefinition['datasets'][number]>();
  if ((template.calculatedVariables ?? []).length > 0) return out;
  const bound = definition.datasets.map((d) => d.bindTo ?? d.name);
  for (const d of definition.datasets) {
    const variable = d.bindTo ?? d.name;
    if (d.shape !== 'rows' || bound.filter((b) => b === variable).length > 1) continue;
    if (template.constants && Object.prototype.hasOwnProperty.call(template.constants, variable)) continue;
    const declared = (template.variables ?? []).find((v) => v.name === variable);
    if (declared && declared.type !== 'array') continue;
    if (canStreamVariable(template.schema, variable)) out.set(variable, d);
  }
  return out;
}

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

/**
 * A stored result must sit in this run's folder of this project (tenant scoping, docs/reporting.md "Security rules").
 */
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

/**
 * A dataset's stored rows as a streamed table's source (renderExcelTo's RowSource): exact numbers
 * converted and the variable's declared item types applied per element, as bindDatasets and the
 * template's variable checks would for the whole array.
 */
export function storedRowSource(storage: ArtefactStorage, result: Pick<InputDataset, 'key' | 'columns'>, declared: TemplateVariable | undefined, maxBytes: number): RowSource {
  return async function* rows() {
    const convert = numberConverter(result.columns);
    let batch: unknown[] = [];
    let index = 0;
    for await (const row of storedRows(storage, result.key, { maxBytes })) {
      const element = convert(row);
      batch.push(declared ? resolveArrayElement(declared, element, index) : element);
      index += 1;
      if (batch.length === SOURCE_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  };
}

export function createReportRenderActivities(deps: ReportRenderDeps) {
  const maxBytes = deps.resultMaxBytes ?? DEFAULT_RESULT_MAX_BYTES;

  const renderDepsOf = (limits: RenderLimits): RenderDeps => ({
    pdfRenderer: deps.pdfRenderer(),
    evaluator: deps.evaluator,
    excelRenderer: deps.excelRenderer,
    limits,
    imageAllowlist: deps.imageAllowlist,
    assets: deps.assets,
    pdfTools: deps.pdfTools,
    signing: deps.signing,
    outboundAllowlist: deps.outboundAllowlist,
  });

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

  /** Every dataset's rows, as many as its shape needs (none for those in `skip`: they are streamed). */
  async function readDatasets(input: RenderReportInput, definition: PinnedDefinition, beat: () => void, skip: ReadonlySet<string> = new Set()): Promise<DatasetRows[]> {
    const out: DatasetRows[] = [];
    for (const d of definition.datasets) {
      const result = resultOf(input, d.name);
      const rows: ResultRow[] = [];
      const limit = skip.has(d.name) ? 0 : rowsNeeded(d.shape);
      for await (const row of storedRows(deps.storage, result.key, { maxBytes, limit })) {
        rows.push(row);
        if (rows.length % 10_000 === 0) beat();
      }
      out.push({ name: d.name, shape: d.shape, bindTo: d.bindTo, columns: result.columns, rows });
    }
    return out;
  }

  /**
   * One file streamed into storage as `produce` writes it (with back-pressure); the file is never
   * whole in memory. A failure destroys the upload, so nothing is stored under the key.
   */
  async function storeStream(key: string, contentType: string, produce: (write: (chunk: Buffer) => Promise<void>) => Promise<void>): Promise<number> {
    const out = new PassThrough();
    // Storage may attach its listeners later (after creating its file): an error destroyed into the stream must not go unhandled.
    out.on('error', () => undefined);
    const stored = deps.storage.put(key, out, contentType);
    stored.catch(() => undefined); // awaited below; a failure also ends the writes
    const ended = stored.then(() => Promise.reject(new Error(`Storage ended before the file ${key}`)));
    ended.catch(() => undefined);
    let bytes = 0;
    const write = async (chunk: Buffer) => {
      if (chunk.length === 0) return;
      bytes += chunk.length;
      if (out.write(chunk)) return;
      await Promise.race([once(out, 'drain'), ended]);
    };
    try {
      await produce(write);
      out.end();
      await stored;
      return bytes;
    } catch (err) {
      out.destroy(err instanceof Error ? err : new Error(String(err)));
      await stored.catch(() => undefined);
      throw err;
    }
  }

  /** CSV text of the stored rows (csvStream), gathered into chunks of about CSV_CHUNK bytes (one write per chunk, not per row). */
  async function writeCsv(result: InputDataset, key: string, ctx: ReturnType<typeof activityContext>): Promise<{ bytes: number; rowCount: number }> {
    let rowCount = 0;
    async function* rows(): AsyncGenerator<ResultRow> {
      for await (const row of storedRows(deps.storage, result.key, { maxBytes })) {
        if (ctx.signal?.aborted) throw ctx.signal.reason;
        yield row;
        if (++rowCount % 5_000 === 0) ctx.heartbeat();
      }
    }
    const bytes = await storeStream(key, CSV_CONTENT_TYPE, async (write) => {
      let text = '';
      for await (const line of csvStream(result.columns, rows()) as AsyncIterable<string>) {
        text += line;
        if (text.length >= CSV_CHUNK) {
          await write(Buffer.from(text, 'utf8'));
          text = '';
        }
      }
      await write(Buffer.from(text, 'utf8'));
    });
    return { bytes, rowCount };
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
      return withHeartbeat(() => ctx.heartbeat(), HEARTBEAT_MS, async () => {
        ctx.heartbeat();
        const documents = formats.filter((f): f is 'pdf' | 'excel' => f !== 'csv');
        if (documents.length > 0) {
          const template = await loadTemplate(definition);
          const declared = (template.definition.variables ?? []).map((v) => v.name);
          const limits = { ...deps.limits, maxLoopIterations: Math.max(deps.limits.maxLoopIterations, deps.maxRows ?? 0) };
          const streamed = documents.includes('excel') ? streamableDatasets(definition, template.definition) : new Map<string, never>();
          let held: Record<string, unknown> | undefined;
          for (const format of documents) {
            const filename = name(stem, EXTENSIONS[format]);
            const key = outputKey(input.projectId, input.runId, filename);
            if (format === 'excel' && streamed.size > 0) {
              // Rows stream from storage into the workbook and the workbook into storage: neither is held.
              const names = new Set([...streamed.values()].map((d) => d.name));
              const variables = bindDatasets(await readDatasets(input, definition, ctx.heartbeat, names), input.parameters, declared);
              if (deps.acceptance) checkAcceptance(template.definition, variables, format, reportAcceptance(deps.acceptance, limits.maxLoopIterations));
              const sources = Object.fromEntries(
                [...streamed].map(([variable, d]) => [variable, storedRowSource(deps.storage, resultOf(input, d.name), (template.definition.variables ?? []).find((v) => v.name === variable), maxBytes)]),
              );
              const bytes = await storeStream(key, CONTENT_TYPES.xlsx, async (write) => {
                await streamExcelDocument(
                  renderDepsOf(limits),
                  { tenant: input.projectId, template: template.definition, variables, sources, watermark: input.watermark, title: stem, signal: ctx.signal },
                  write,
                );
              });
              outputs.push({ format, filename, key, contentType: CONTENT_TYPES.xlsx, bytes });
              ctx.heartbeat();
              continue;
            }
            held ??= bindDatasets(await readDatasets(input, definition, ctx.heartbeat), input.parameters, declared);
            // What a generation refuses at acceptance fails the run here, before Chromium or the workbook
            // starts, with the same code (ERR_LIMIT_017, ERR_LIMIT_003, ERR_OUTBOUND_001, …).
            if (deps.acceptance) checkAcceptance(template.definition, held, format, reportAcceptance(deps.acceptance, limits.maxLoopIterations));
            const doc = await renderDocument(
              renderDepsOf(limits),
              // A cancelled run's render stops where it is (its Chromium page closes, its Excel thread ends).
              // A pdf output's `output` finishes the printed (and, on the free quota, watermarked) PDF.
              { tenant: input.projectId, template: template.definition, variables: held, format, output: format === 'pdf' ? pdfOutputOf(definition) : undefined, watermark: input.watermark, title: stem, signal: ctx.signal },
            );
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
      });
    },
  };
}
