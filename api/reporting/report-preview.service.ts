import { buffer } from 'node:stream/consumers';
import type { DataSource } from 'typeorm';
import { CONTENT_TYPES } from '../../adapters/rendering/render-document';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { QueryVersionEntity } from '../../db/reporting/query-version.entity';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import { bindDatasets, type DatasetRows } from '../../domain/reporting/bind-datasets';
import { compileQuery } from '../../domain/reporting/compile-query';
import { csvStream } from '../../domain/reporting/csv';
import { coerceParameters, datasetQueryInput } from '../../domain/reporting/parameters';
import type { QueryRunner } from '../../domain/reporting/query-runner';
import type { RunnerTarget } from '../../adapters/query-runners/runner-target';
import type { PreviewRenderer } from '../../platform/worker-previews';
import { getDatasource } from './datasources.service';
import { previewRows } from './queries.service';
import { getReport, pin } from './reports.service';
import { pdfOutputOf } from '../../domain/reporting/report-output';

/**
 * POST /reports/:id/preview (docs/reporting.md "Report preview"): the draft, pinned as
 * publish would pin it (every problem at once, 400 ERR_RPT_005), its queries run from this process
 * like query previews (at most 1,000 rows and 5 MB each, within each query's timeout), bound and
 * rendered like a run's output but watermarked, as template previews are. Nothing is stored or charged.
 */

export interface ReportPreviewDeps {
  db: DataSource;
  /** csv datasources read their uploaded file from it. */
  storage: ArtefactStorage;
  evaluator: Evaluator;
  connect: (target: RunnerTarget) => QueryRunner;
  /** Renders on the render worker role (platform/worker-previews.ts). */
  render: PreviewRenderer;
}

export interface ReportPreviewInput {
  parameters?: Record<string, unknown>;
  format: 'pdf' | 'excel' | 'csv';
  /** csv: the dataset to write (default the first). */
  dataset?: string;
}

export interface ReportPreview {
  filename: string;
  contentType: string;
  body: Buffer;
  pageCount?: number;
}

export async function previewReport(deps: ReportPreviewDeps, projectId: string, ref: string, input: ReportPreviewInput): Promise<ReportPreview> {
  const report = await getReport(deps, projectId, ref);
  const pinned = await pin(deps.db, projectId, structuredClone(report.draft));
  const wanted = input.format === 'csv' ? [pinned.datasets.find((d) => d.name === (input.dataset ?? pinned.datasets[0]?.name))] : pinned.datasets;
  if (wanted.some((d) => d === undefined)) throw new AppError('ERR_VALID_001', `The report has no dataset '${input.dataset}'`, { field: 'dataset' });
  if (input.format !== 'csv' && !pinned.templateId) throw new AppError('ERR_VALID_001', `A ${input.format} preview needs the report's template`, { field: 'format' });

  const now = new Date();
  const values = coerceParameters(pinned.parameters, input.parameters ?? {}, { now, timezone: 'UTC' });
  const datasets: DatasetRows[] = [];
  for (const d of wanted as NonNullable<(typeof wanted)[number]>[]) {
    const qv = await deps.db.getRepository(QueryVersionEntity).findOneByOrFail({ queryId: d.queryId, version: d.queryVersion });
    const ds = await getDatasource(deps, projectId, qv.datasourceId);
    const def = qv.definition;
    const queryValues = coerceParameters(def.parameters, datasetQueryInput(d.parameters, values), { now, timezone: 'UTC' });
    const compiled = await compileQuery(deps.evaluator, projectId, ds.kind, def, queryValues, `The query of dataset '${d.name}'`);
    const result = await previewRows(deps, ds, compiled, def);
    datasets.push({ name: d.name, shape: d.shape, bindTo: d.bindTo, columns: result.columns, rows: result.rows });
  }

  const base = `${report.slug}-preview`;
  if (input.format === 'csv') {
    const body = await buffer(csvStream(datasets[0].columns, datasets[0].rows));
    return { filename: `${base}.csv`, contentType: 'text/csv; charset=utf-8', body };
  }
  const template = await deps.db.getRepository(TemplateVersionEntity).findOneByOrFail({ templateId: pinned.templateId!, version: pinned.templateVersion! });
  const parameters = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));
  const variables = bindDatasets(datasets, parameters, (template.definition.variables ?? []).map((v) => v.name));
  // A pdf preview is finished as the report's pdf output says (its `output`), watermarked as every preview.
  const output = input.format === 'pdf' ? pdfOutputOf(pinned) : undefined;
  const doc = await deps.render({ tenant: projectId, template: template.definition, variables, format: input.format, watermark: true, title: report.name, ...(output ? { output } : {}) });
  return { filename: `${base}.${doc.fileExtension}`, contentType: doc.fileExtension === 'pdf' ? CONTENT_TYPES.pdf : CONTENT_TYPES.xlsx, body: doc.body, pageCount: doc.pageCount };
}
