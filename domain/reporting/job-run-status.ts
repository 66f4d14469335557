import { defineStateMachine } from '../state-machine';

/** `reporting_job_runs.status` (docs/reporting.md "Statuses"). */
const JOB_RUN_STATUSES = ['queued', 'running', 'delivering', 'completed', 'failed', 'cancelled', 'skipped'] as const;
export type JobRunStatus = (typeof JOB_RUN_STATUSES)[number];

/**
 * Moved only by db/reporting/job-run-state.ts. As a report run, a job run that failed only because
 * its bundle's deliveries failed (`ERR_RDLV_004`) completes once manual retries delivered them
 * (docs/reporting.md "Deliveries"); the owner guards that condition, and `failed` stays an end.
 */
export const JOB_RUN_TRANSITIONS: Readonly<Record<JobRunStatus, readonly JobRunStatus[]>> = {
  queued: ['running', 'failed', 'cancelled'],
  running: ['delivering', 'completed', 'failed', 'cancelled'],
  delivering: ['completed', 'failed'],
  completed: [],
  failed: ['completed'],
  cancelled: [],
  skipped: [],
};

export const jobRunMachine = defineStateMachine(JOB_RUN_STATUSES, ['queued', 'skipped'], JOB_RUN_TRANSITIONS, { ended: ['failed'] });

/** One report of a job run: its child run once opened, and the job item it was made from (kept, so an edit of the job does not change a run under way). */
export interface JobRunItem {
  reportId: string;
  runId: string | null;
  status: 'pending' | 'queued' | 'running' | 'rendering' | 'delivering' | 'completed' | 'failed' | 'cancelled' | 'skipped';
  parameters?: Record<string, unknown>;
  outputs?: Array<'pdf' | 'excel' | 'csv'>;
  /** Why the item has no run (report unpublished, parameters refused). */
  error?: { code: string; message: string };
}
