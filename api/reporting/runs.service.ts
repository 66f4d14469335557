import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { ReportRunOutputEntity } from '../../db/reporting/report-run-output.entity';
import { ReportRunEntity } from '../../db/reporting/report-run.entity';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { newReportRun, RUN_SHORT_ID_PREFIX as SHORT_ID_PREFIX, storableValues } from '../../db/reporting/new-run';
import { insertReportRun, moveReportRun } from '../../db/reporting/run-state';
import { checkMetadata } from '../../domain/documents/metadata';
import { AppError } from '../../domain/errors';
import type { Logger } from '../../domain/logger';
import { coerceParameters } from '../../domain/reporting/parameters';
import { CANCELLABLE_RUN_STATUSES } from '../../domain/reporting/run-status';
import { workflowIds, type TaskQueues } from '../../domain/temporal-names';
import type { ReportRunStartDeps } from '../../platform/workflow-starts';
import { resolveChannelRefs } from '../../db/reporting/channel-refs';
import { presentReportDelivery } from '../deliveries/delivery.presenter';
import { deliveriesOf, deliverySummary, retryFailedDeliveries, type DeliveryDeps } from './deliveries.service';
import { outputBase, presentRun, type PresentedOutput } from './runs.presenter';
import type { ExportRunsQuery, ListRunsQuery, StartRunInput } from './runs.schema';
import { getReport } from './reports.service';
import { isUuid } from '../../domain/ids';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Report runs (docs/reporting.md "Runs", "Statuses"): a run is recorded `queued`, then
 * its workflow `report-run-<id>` is started; cancel moves the record first (so it wins over the
 * workflow's next move) and then cancels the workflow.
 */

export interface RunDeps extends DeliveryDeps {
  db: DataSource;
  temporal: Client;
  taskQueues: TaskQueues;
  storage: ArtefactStorage;
  downloadUrlTtlSeconds: number;
  config: ReportRunStartDeps['config'];
  logger: Logger;
}

export interface RunCaller {
  projectId: string;
  userId?: string;
  apiKeyId?: string;
  /** An OAuth client-credentials token (docs/oauth.md): a program, like an API key. */
  oauthClientId?: string;
}

async function findRun(db: DataSource, projectId: string, ref: string): Promise<ReportRunEntity> {
  const run = await findByIdOrShortId(db, ReportRunEntity, projectId, ref, SHORT_ID_PREFIX);
  if (!run) throw new AppError('ERR_RPT_009');
  return run;
}

/** Runs in the transaction that inserts a run (the Idempotency-Key's answer, docs/idempotency.md). */
export type RunInTransaction = (m: EntityManager, run: ReportRunEntity) => Promise<void>;

/**
 * Inserts a `queued` run with its outbox mark (`workflow_pending`, set by newReportRun for the API's
 * triggers), then starts its workflow after the answer (platform/workflow-outbox.ts): a start that
 * fails is made by a worker's outbox sweep.
 */
async function openRun(
  deps: RunDeps,
  caller: RunCaller,
  version: ReportVersionEntity,
  fields: { parameters: Record<string, unknown>; formats: ReportRunEntity['formats']; metadata: Record<string, unknown>; retryOf?: string; channelIds?: string[] },
  inTransaction?: RunInTransaction,
): Promise<ReportRunEntity> {
  const run = newReportRun({
    projectId: caller.projectId,
    reportId: version.reportId,
    reportVersion: version.version,
    trigger: caller.apiKeyId || caller.oauthClientId ? 'api' : 'manual',
    retryOf: fields.retryOf,
    parameters: fields.parameters,
    formats: fields.formats,
    metadata: fields.metadata,
    channelIds: fields.channelIds,
    createdBy: caller.userId,
    apiKeyId: caller.apiKeyId,
  });
  await deps.db.transaction(async (m) => {
    await insertReportRun(m, run);
    await inTransaction?.(m, run);
  });
  deps.outbox.start({ kind: 'reportRun', id: run.id, projectId: run.projectId });
  return run;
}

/**
 * Starts a run of a published report version (the latest unless `version` names one), with the
 * report's parameters checked and typed now (400 ERR_RPT_007) and the formats a subset of the
 * version's outputs.
 */
export async function startRun(deps: RunDeps, caller: RunCaller, reportRef: string, input: StartRunInput, inTransaction?: RunInTransaction): Promise<ReportRunEntity> {
  const report = await getReport(deps, caller.projectId, reportRef);
  if (report.latestVersion === 0) throw new AppError('ERR_RPT_003');
  const wanted = input.version ?? report.latestVersion;
  const version = await deps.db.getRepository(ReportVersionEntity).findOneBy({ reportId: report.id, version: wanted });
  if (!version) throw new AppError('ERR_RPT_002', `Report version ${wanted} not found`, { version: wanted });
  const available = [...new Set(version.definition.outputs.map((o) => o.format))];
  const formats = input.outputs ?? available;
  const missing = formats.filter((f) => !available.includes(f));
  if (missing.length > 0) throw new AppError('ERR_VALID_001', `This report version has no ${missing.join(', ')} output (it has ${available.join(', ')})`, { field: 'outputs' });
  const values = coerceParameters(version.definition.parameters, input.parameters ?? {}, { now: new Date(), timezone: 'UTC' });
  const metadata = checkMetadata(input.metadata) ?? {};
  const channelIds = await resolveChannelRefs(deps.db, caller.projectId, input.channelIds);
  return openRun(deps, caller, version, { parameters: storableValues(values), formats, metadata, channelIds }, inTransaction);
}

/**
 * A failed run once more: a new run of the same version, values, formats and channels, `retryOf`
 * the old one. With `deliveriesOnly`, the same run's failed deliveries are re-sent instead (the
 * run must have failed at `delivery`); the others are not sent again.
 */
export async function retryRun(deps: RunDeps, caller: RunCaller, ref: string, deliveriesOnly: boolean): Promise<ReportRunEntity> {
  const old = await findRun(deps.db, caller.projectId, ref);
  if (old.status !== 'failed') throw new AppError('ERR_RPT_010', undefined, { status: old.status });
  if (deliveriesOnly) {
    if (old.failedStage !== 'delivery') throw new AppError('ERR_RPT_010', 'This run has no failed deliveries to re-send', { status: old.status, failedStage: old.failedStage, deliveriesOnly });
    await retryFailedDeliveries(deps, caller.projectId, { runId: old.id });
    return findRun(deps.db, caller.projectId, old.id);
  }
  const version = await deps.db.getRepository(ReportVersionEntity).findOneBy({ reportId: old.reportId, version: old.reportVersion });
  if (!version) throw new AppError('ERR_RPT_002', `Report version ${old.reportVersion} not found`);
  return openRun(deps, caller, version, { parameters: old.parameters, formats: old.formats, metadata: old.metadata, retryOf: old.id, channelIds: old.channelIds });
}

/** A run's deliveries with their attempts (GET /runs/:id/deliveries). */
export async function runDeliveries(deps: RunDeps, projectId: string, ref: string): Promise<ReturnType<typeof presentReportDelivery>[]> {
  const run = await findRun(deps.db, projectId, ref);
  return ((await deliveriesOf(deps.db, 'runId', [run.id])).get(run.id) ?? []).map(presentReportDelivery);
}

/** Cancels a run that has not reached `delivering` or an end (409 ERR_RPT_008 otherwise). */
export async function cancelRun(deps: RunDeps, projectId: string, ref: string): Promise<ReportRunEntity> {
  const run = await findRun(deps.db, projectId, ref);
  if (!CANCELLABLE_RUN_STATUSES.includes(run.status) || !(await moveReportRun(deps.db, { runId: run.id, status: 'cancelled' }))) {
    const now = await findRun(deps.db, projectId, run.id);
    throw new AppError('ERR_RPT_008', undefined, { status: now.status });
  }
  try {
    await deps.temporal.workflow.getHandle(workflowIds.reportRun(run.id)).cancel();
  } catch (err) {
    // A workflow that already ended has nothing left to stop; the record says cancelled either way.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  return findRun(deps.db, projectId, run.id);
}

export async function getRun(deps: RunDeps, projectId: string, ref: string): Promise<ReportRunEntity> {
  return findRun(deps.db, projectId, ref);
}

export async function listRuns(deps: RunDeps, projectId: string, q: ListRunsQuery): Promise<{ runs: ReportRunEntity[]; total: number }> {
  const qb = deps.db.getRepository(ReportRunEntity).createQueryBuilder('r').where('r.projectId = :projectId', { projectId });
  if (q.reportId) {
    const report = await getReport(deps, projectId, q.reportId).catch(() => null);
    if (!report) return { runs: [], total: 0 };
    qb.andWhere('r.reportId = :reportId', { reportId: report.id });
  }
  if (q.scheduleId) qb.andWhere('r.scheduleId = :scheduleId', { scheduleId: q.scheduleId });
  if (q.jobRunId) qb.andWhere('r.jobRunId = :jobRunId', { jobRunId: q.jobRunId });
  if (q.status) qb.andWhere('r.status = :status', { status: q.status });
  if (q.trigger) qb.andWhere('r.trigger = :trigger', { trigger: q.trigger });
  if (q.from) qb.andWhere('r.createdAt >= :from', { from: q.from });
  if (q.to) qb.andWhere('r.createdAt < :to', { to: q.to });
  const order = q.sortOrder === 'asc' ? 'ASC' : 'DESC';
  qb.orderBy(`r.${q.sortBy}`, order).addOrderBy('r.id', order);
  const [runs, total] = await qb.skip((q.page - 1) * q.limit).take(q.limit).getManyAndCount();
  return { runs, total };
}

/** Columns of the runs export (CSV header order; JSON uses the same keys). */
export const RUN_EXPORT_COLUMNS = ['runId', 'shortId', 'reportId', 'reportVersion', 'trigger', 'status', 'failedStage', 'errorCode', 'errorMessage', 'formats', 'documentsCharged', 'parameters', 'metadata', 'createdAt', 'completedAt'] as const;

/**
 * Every run of the project matching the filters, oldest first, read by keyset in pages (the jobs
 * export pattern): one page in memory whatever the size.
 */
export async function* exportRuns(deps: RunDeps, projectId: string, q: ExportRunsQuery, pageSize = 1000): AsyncGenerator<Record<(typeof RUN_EXPORT_COLUMNS)[number], unknown>> {
  let reportId: string | null = null;
  if (q.reportId) {
    const report = await getReport(deps, projectId, q.reportId).catch(() => null);
    if (!report) return;
    reportId = report.id;
  }
  let after: [string, string] | undefined;
  for (;;) {
    const params: unknown[] = [projectId, q.from ?? null, q.to ?? null, q.status ?? null, reportId, pageSize, ...(after ?? [])];
    const rows: Array<Record<string, any>> = await deps.db.query(
      `SELECT id, short_id, report_id, report_version, trigger, status, failed_stage, error, formats, documents_charged, parameters, metadata, created_at, completed_at,
              created_at::text AS cursor_at
         FROM reporting_runs
        WHERE project_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
          AND ($4::text IS NULL OR status = $4) AND ($5::uuid IS NULL OR report_id = $5) ${after ? 'AND (created_at, id) > ($7::timestamptz, $8)' : ''}
        ORDER BY created_at, id LIMIT $6`,
      params,
    );
    for (const r of rows) {
      yield {
        runId: r.id,
        shortId: r.short_id,
        reportId: r.report_id,
        reportVersion: r.report_version,
        trigger: r.trigger,
        status: r.status,
        failedStage: r.failed_stage,
        errorCode: r.error?.code ?? null,
        errorMessage: r.error?.message ?? null,
        formats: (r.formats as string[]).join(' '),
        documentsCharged: r.documents_charged,
        parameters: JSON.stringify(r.parameters),
        metadata: JSON.stringify(r.metadata),
        createdAt: new Date(r.created_at).toISOString(),
        completedAt: r.completed_at ? new Date(r.completed_at).toISOString() : null,
      };
    }
    if (rows.length < pageSize) return;
    // The cursor keeps Postgres' microseconds; a JS Date would round them away and repeat rows.
    after = [rows[rows.length - 1].cursor_at, rows[rows.length - 1].id];
  }
}

const isExpired = (o: ReportRunOutputEntity, now = new Date()) => o.deletedAt !== null || o.expiresAt <= now;

/** The runs' outputs with fresh signed links (none once past retention). */
async function outputsOf(deps: RunDeps, runs: ReportRunEntity[]): Promise<Map<string, PresentedOutput[]>> {
  const byRun = new Map<string, PresentedOutput[]>(runs.map((r) => [r.id, []]));
  if (runs.length === 0) return byRun;
  const rows = await deps.db
    .getRepository(ReportRunOutputEntity)
    .createQueryBuilder('o')
    .where('o.runId IN (:...ids)', { ids: runs.map((r) => r.id) })
    .orderBy('o.createdAt', 'ASC')
    .addOrderBy('o.filename', 'ASC')
    .getMany();
  for (const o of rows) {
    const url = isExpired(o) ? null : (await deps.storage.signedUrl(o.storageKey, { ttlSeconds: deps.downloadUrlTtlSeconds, filename: o.filename })).url;
    byRun.get(o.runId)?.push({ ...outputBase(o), downloadUrl: url });
  }
  return byRun;
}

export async function presentRuns(deps: RunDeps, runs: ReportRunEntity[]) {
  const outputs = await outputsOf(deps, runs);
  const deliveries = await deliveriesOf(deps.db, 'runId', runs.map((r) => r.id));
  return runs.map((r) => presentRun(r, outputs.get(r.id) ?? [], (deliveries.get(r.id) ?? []).map(deliverySummary)));
}

/** A fresh signed link to one output (404 ERR_RPT_011; 410 ERR_RPT_012 after retention). */
export async function downloadUrl(deps: RunDeps, projectId: string, runRef: string, outputId: string): Promise<string> {
  const run = await findRun(deps.db, projectId, runRef);
  const output = isUuid(outputId) ? await deps.db.getRepository(ReportRunOutputEntity).findOneBy({ id: outputId, runId: run.id }) : null;
  if (!output) throw new AppError('ERR_RPT_011');
  if (isExpired(output)) throw new AppError('ERR_RPT_012', undefined, { expiredAt: output.expiresAt.toISOString() });
  return (await deps.storage.signedUrl(output.storageKey, { ttlSeconds: deps.downloadUrlTtlSeconds, filename: output.filename })).url;
}
