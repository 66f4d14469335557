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

/**
 * The error of a job whose render gave up on something other than a catalogued error (Chromium
 * timed out, crashed, broke its protocol; the PDF tools died): `message` is the workflow's
 * ("Rendering failed: Navigation timeout of 30000 ms exceeded"), and only says whether it was a
 * timeout. The job keeps the catalogue's code and words: the browser's own text never reaches a
 * client (docs/documents.md "Limits and errors"); the worker's log has it.
 */
export function renderGaveUp(message: string): { code: 'ERR_RENDER_001'; message: string } {
  const what = /^merging/i.test(message) ? 'Merging' : 'Rendering';
  if (/time(?:d)?[\s-]?out|timeout|exceeded/i.test(message)) {
    return { code: 'ERR_RENDER_001', message: `${what} did not finish in time, after retries: the document may be too large or too complex (a very long unbroken text, a huge image)` };
  }
  return { code: 'ERR_RENDER_001', message: `${what} failed, after retries: the renderer stopped unexpectedly` };
}
