import { randomUUID } from 'node:crypto';
import { BUILT_IN_PARAMETERS } from '../../domain/reporting/parameters';
import type { RunTrigger } from '../../domain/reporting/run-status';
import { randomBase62 } from '../../domain/signing';
import type { ReportRunEntity } from './report-run.entity';

export const RUN_SHORT_ID_PREFIX = 'rrun_';

/** What opens a run: the API (manual/api), a schedule's occurrence, or a job run's item. */
export interface NewRunFields {
  projectId: string;
  reportId: string;
  reportVersion: number;
  trigger: RunTrigger;
  /** Resolved values, as storableValues() makes them. */
  parameters: Record<string, unknown>;
  formats: ReportRunEntity['formats'];
  metadata?: Record<string, unknown>;
  retryOf?: string | null;
  scheduleId?: string | null;
  jobRunId?: string | null;
  occurrenceKey?: string | null;
  channelIds?: string[];
  skipIfEmpty?: boolean | null;
  /** Default: now. */
  scheduledFor?: Date;
  /** Default: UTC. */
  timezone?: string;
  createdBy?: string | null;
  apiKeyId?: string | null;
  /** `skipped` only for a duplicate occurrence's audit record. */
  status?: 'queued' | 'skipped';
  skipReason?: string | null;
}

/** A new run record (`queued`, or `skipped` for a duplicate occurrence), not yet inserted (db/reporting/run-state.ts insertReportRun). */
export function newReportRun(f: NewRunFields): ReportRunEntity {
  const now = new Date();
  const skipped = f.status === 'skipped';
  return {
    id: randomUUID(),
    projectId: f.projectId,
    shortId: RUN_SHORT_ID_PREFIX + randomBase62(16),
    reportId: f.reportId,
    reportVersion: f.reportVersion,
    trigger: f.trigger,
    retryOf: f.retryOf ?? null,
    scheduleId: f.scheduleId ?? null,
    jobRunId: f.jobRunId ?? null,
    occurrenceKey: f.occurrenceKey ?? null,
    channelIds: f.channelIds ?? [],
    skipIfEmpty: f.skipIfEmpty ?? null,
    scheduledFor: f.scheduledFor ?? now,
    timezone: f.timezone ?? 'UTC',
    parameters: f.parameters,
    formats: f.formats,
    status: f.status ?? 'queued',
    failedStage: null,
    skipReason: f.skipReason ?? null,
    datasets: [],
    error: null,
    metadata: f.metadata ?? {},
    deliveryStatus: 'none',
    documentsCharged: 0,
    billing: null,
    chargedAt: null,
    createdBy: f.createdBy ?? null,
    apiKeyId: f.apiKeyId ?? null,
    // The API's runs start through the outbox; a schedule's or a job's through their parent workflow.
    workflowPending: !skipped && (f.trigger === 'manual' || f.trigger === 'api'),
    workflowStartedAt: null,
    createdAt: now,
    startedAt: null,
    completedAt: skipped ? now : null,
    updatedAt: now,
  };
}

/** Report parameter values as stored on a run: the report's own (built-ins come from the run's clock), dates as ISO text. */
export function storableValues(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values)
      .filter(([name]) => !BUILT_IN_PARAMETERS.includes(name))
      .map(([name, v]) => [name, v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.map((x) => (x instanceof Date ? x.toISOString() : x)) : v]),
  );
}
