import { defineStateMachine } from '../state-machine';

/** `document_jobs.status` (contract §4). Moved only by db/documents/job-state.ts. */
export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * A job is created `queued` and claimed `processing` by its render. `processing` lists itself: a
 * render that Temporal retries (the worker died) claims the job again and counts the attempt.
 * A job ends once; a retry of a failed job is a new job.
 */
export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  // `failed` straight from `queued`: its workflow gave up before any render claimed it.
  queued: ['processing', 'failed', 'cancelled'],
  processing: ['processing', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export const jobMachine = defineStateMachine(JOB_STATUSES, ['queued'], JOB_TRANSITIONS);

/** How a job ended, as its workflow reports it. */
export type JobOutcome = { jobId: string; status: 'completed' | 'failed' | 'cancelled'; errorMessage?: string };
