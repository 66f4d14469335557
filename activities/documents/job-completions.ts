import type { DataSource } from 'typeorm';
import { completeJobs, type RenderedJob } from '../../db/documents/job-state';

/**
 * Completes rendered jobs with group commit: a job is written at once when no write is under way,
 * otherwise with every job that became ready meanwhile, in the next write. One process's renders
 * (a batch's groups and single jobs alike) then share their completions: under load one statement
 * completes several jobs, and an idle worker completes a job without any wait.
 */
export interface JobCompletions {
  /** Resolves once the job's completion is committed: true if it completed, false if it was cancelled or deleted meanwhile. */
  complete(job: RenderedJob): Promise<boolean>;
}

interface Waiting {
  job: RenderedJob;
  resolve(completed: boolean): void;
  reject(err: unknown): void;
}

export function createJobCompletions(db: DataSource): JobCompletions {
  let waiting: Waiting[] = [];
  let writing = false;

  const write = async () => {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        const completed = await completeJobs(
          db,
          batch.map((w) => w.job),
        );
        for (const w of batch) w.resolve(completed.has(w.job.job.id));
      } catch (err) {
        // Each render sees the failure and its activity is retried; the rows stay `processing`.
        for (const w of batch) w.reject(err);
      }
    }
    writing = false;
  };

  return {
    complete(job) {
      return new Promise<boolean>((resolve, reject) => {
        waiting.push({ job, resolve, reject });
        if (!writing) void write();
      });
    },
  };
}
