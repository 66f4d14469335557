import { defineStateMachine } from '../state-machine';

/** `reporting_runs.status` (docs/reporting.md "Statuses"). Moved only by db/reporting/run-state.ts. */
const REPORT_RUN_STATUSES = ['queued', 'running', 'rendering', 'delivering', 'completed', 'failed', 'cancelled', 'skipped'] as const;
export type ReportRunStatus = (typeof REPORT_RUN_STATUSES)[number];

export type FailedStage = 'query' | 'render' | 'delivery';

/**
 * The moves (docs/reporting.md "Statuses"). `queued → failed` is ours: a run whose pinned report version or template
 * can no longer be read fails before its first query (`failedStage: query`). `delivering` cannot be
 * cancelled (deliveries under way finish); the others can until they end. `failed → completed` is
 * the one way back (docs/reporting.md "Deliveries"): a run that failed only at `delivery` completes
 * once manual retries delivered every failed delivery; the owner allows it only for
 * `failedStage: delivery`. `failed` is still an end (`ended`): nothing else moves such a run.
 */
export const REPORT_RUN_TRANSITIONS: Readonly<Record<ReportRunStatus, readonly ReportRunStatus[]>> = {
  queued: ['running', 'failed', 'cancelled'],
  running: ['rendering', 'skipped', 'failed', 'cancelled'],
  rendering: ['delivering', 'completed', 'failed', 'cancelled'],
  delivering: ['completed', 'failed'],
  completed: [],
  failed: ['completed'],
  cancelled: [],
  skipped: [],
};

export const reportRunMachine = defineStateMachine(REPORT_RUN_STATUSES, ['queued', 'skipped'], REPORT_RUN_TRANSITIONS, { ended: ['failed'] });

/** Runs that may still be cancelled (anything else answers 409 ERR_RPT_008). */
export const CANCELLABLE_RUN_STATUSES = reportRunMachine.sourcesOf('cancelled');

export type RunTrigger = 'manual' | 'api' | 'schedule' | 'job';

/** One dataset's part of a run, as the run record shows it (docs/reporting.md "Runs"). */
export interface RunDataset {
  name: string;
  queryId: string;
  queryVersion: number;
  executedBy: 'server' | 'agent';
  /** The agent whose datasource this is (executedBy `agent`). */
  agentId?: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  rowCount?: number;
  truncated?: boolean;
  bytes?: number;
  durationMs?: number;
  /** The result file (never shown to clients). */
  key?: string;
  columns?: Array<{ name: string; dataType: string }>;
  error?: { code: string; message: string };
}
