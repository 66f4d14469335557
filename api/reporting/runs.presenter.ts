import type { ReportRunOutputEntity } from '../../db/reporting/report-run-output.entity';
import type { ReportRunEntity } from '../../db/reporting/report-run.entity';

/** A run as clients see it (docs/reporting.md "Runs"): no storage keys, the outputs with fresh signed links. */

export interface PresentedOutput {
  id: string;
  format: string;
  dataset?: string;
  filename: string;
  bytes: number;
  pageCount?: number;
  rowCount?: number;
  /** Null once the file is past retention. */
  downloadUrl: string | null;
  expiresAt: string;
}

export function presentRun(run: ReportRunEntity, outputs: PresentedOutput[], deliveries: unknown[] = []) {
  return {
    id: run.id,
    shortId: run.shortId,
    reportId: run.reportId,
    reportVersion: run.reportVersion,
    trigger: run.trigger,
    scheduleId: run.scheduleId,
    jobRunId: run.jobRunId,
    retryOf: run.retryOf,
    scheduledFor: run.scheduledFor.toISOString(),
    timezone: run.timezone,
    parameters: run.parameters,
    formats: run.formats,
    status: run.status,
    failedStage: run.failedStage,
    skipReason: run.skipReason,
    datasets: run.datasets.map((d) => ({
      name: d.name,
      queryId: d.queryId,
      queryVersion: d.queryVersion,
      executedBy: d.executedBy,
      ...(d.agentId ? { agentId: d.agentId } : {}),
      status: d.status,
      rowCount: d.rowCount ?? null,
      truncated: d.truncated ?? false,
      bytes: d.bytes ?? null,
      durationMs: d.durationMs ?? null,
      columns: d.columns ?? null,
      error: d.error ?? null,
    })),
    outputs,
    deliveryStatus: run.deliveryStatus,
    channelIds: run.channelIds,
    deliveries,
    documentsCharged: run.documentsCharged,
    error: run.error,
    metadata: run.metadata,
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    completedAt: run.completedAt?.toISOString() ?? null,
  };
}

export const outputBase = (o: ReportRunOutputEntity) => ({
  id: o.id,
  format: o.format,
  ...(o.dataset ? { dataset: o.dataset } : {}),
  filename: o.filename,
  bytes: o.bytes,
  ...(o.pageCount !== null ? { pageCount: o.pageCount } : {}),
  ...(o.rowCount !== null ? { rowCount: o.rowCount } : {}),
  expiresAt: o.expiresAt.toISOString(),
});
