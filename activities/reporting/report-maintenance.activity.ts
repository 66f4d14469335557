import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { reportRunMachine } from '../../domain/reporting/run-status';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { sweepAgentTasks } from '../../db/reporting/agent-task-state';

/**
 * Reporting's part of the maintenance schedule (`maintenanceWorkflow`; docs/reporting.md
 * "Runs", "Retention and restart"): output files past `expires_at`, dataset result files of runs
 * that ended more than REPORTING_ARTEFACT_RETENTION_DAYS ago, run records older than
 * REPORTING_RUN_RETENTION_DAYS, and queued runs whose workflow never started. Every step works in
 * batches (`limit`) and answers how many it handled, so the workflow loops while a batch is full.
 * Files are deleted before the rows that name them: a sweep that stops in between finds the row
 * again next time (deleting a missing file is no error).
 */

export interface ReportMaintenanceDeps {
  db: DataSource;
  storage: ArtefactStorage;
  /** Starts `report-run-<id>` (platform/workflow-starts.ts `startReportRun`, REJECT_DUPLICATE). */
  restartRun: (run: { id: string; projectId: string }) => Promise<void>;
  /** Starts a job run's workflow (`report-job-run-<id>`). */
  restartJobRun: (jobRun: { id: string; projectId: string }) => Promise<void>;
}

const ENDED = reportRunMachine.ended;

/** Runs whose status ended and whose end (or creation, for a run inserted `skipped`) is older than `days`. */
const ENDED_BEFORE = `status = ANY($1::text[]) AND coalesce(completed_at, created_at) < now() - make_interval(days => $2)`;

export function createReportMaintenanceActivities(deps: ReportMaintenanceDeps) {
  const { db, storage } = deps;

  /** The result file keys a run's `datasets` still name. */
  const datasetKeys = (datasets: Array<{ key?: string }> | null): string[] =>
    (datasets ?? []).map((d) => d.key).filter((k): k is string => typeof k === 'string' && k.length > 0);

  return {
    /**
     * Output files past their `expires_at`: the file is deleted, then `deleted_at` is set (the row
     * stays for the run's history; its download answers 410 ERR_RPT_012, its `downloadUrl` is null).
     */
    async expireReportOutputs(input: { limit: number }): Promise<number> {
      const rows: Array<{ id: string; storage_key: string }> = await db.query(
        `SELECT id, storage_key FROM reporting_run_outputs
          WHERE deleted_at IS NULL AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
        [input.limit],
      );
      for (const row of rows) {
        await storage.delete(row.storage_key);
        await db.query(`UPDATE reporting_run_outputs SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL`, [row.id]);
      }
      return rows.length;
    },

    /**
     * Dataset result files (`reporting/<projectId>/runs/<runId>/datasets/…`) of runs that ended more
     * than `olderThanDays` ago. The file's `key` is then dropped from the run's `datasets` entry
     * (never shown to clients; it marks the file as gone), every other field stays.
     */
    async expireReportDatasets(input: { olderThanDays: number; limit: number }): Promise<number> {
      const rows: Array<{ id: string; datasets: Array<{ key?: string }> }> = await db.query(
        `SELECT id, datasets FROM reporting_runs
          WHERE ${ENDED_BEFORE} AND jsonb_path_exists(datasets, '$[*].key')
          ORDER BY coalesce(completed_at, created_at) LIMIT $3`,
        [ENDED, input.olderThanDays, input.limit],
      );
      for (const row of rows) {
        for (const key of datasetKeys(row.datasets)) await storage.delete(key);
        await db.query(
          `UPDATE reporting_runs SET datasets = (SELECT coalesce(jsonb_agg(d - 'key' ORDER BY i), '[]'::jsonb)
                                                   FROM jsonb_array_elements(datasets) WITH ORDINALITY AS e(d, i))
            WHERE id = $1`,
          [row.id],
        );
      }
      return rows.length;
    },

    /** Runs that ended more than `olderThanDays` ago: their files (outputs not yet deleted, dataset results), then the run with its output rows. */
    async deleteOldReportRuns(input: { olderThanDays: number; limit: number }): Promise<number> {
      const rows: Array<{ id: string; datasets: Array<{ key?: string }> }> = await db.query(
        `SELECT id, datasets FROM reporting_runs WHERE ${ENDED_BEFORE} ORDER BY coalesce(completed_at, created_at) LIMIT $3`,
        [ENDED, input.olderThanDays, input.limit],
      );
      for (const row of rows) {
        const outputs: Array<{ storage_key: string }> = await db.query(
          `SELECT storage_key FROM reporting_run_outputs WHERE run_id = $1 AND deleted_at IS NULL`,
          [row.id],
        );
        for (const o of outputs) await storage.delete(o.storage_key);
        for (const key of datasetKeys(row.datasets)) await storage.delete(key);
        // Output rows go with the run (ON DELETE CASCADE).
        await db.query(`DELETE FROM reporting_runs WHERE id = $1`, [row.id]);
      }
      return rows.length;
    },

    /**
     * Runs and job runs the API opened that are still `queued` after `olderThanSeconds` without an
     * outbox mark (the outbox sweep starts those: runs from before it, or whose history is gone):
     * their workflow is started.
     * One that exists already (running, or ended before the record moved) answers already-started
     * and is left alone. Runs of a schedule or a job are not touched: their parent workflow starts
     * them (and starts them again after a crash). Answers how many started.
     */
    async restartStrandedReportRuns(input: { olderThanSeconds: number; limit: number }): Promise<number> {
      const stranded = async (table: string, extra: string) =>
        (await db.query(
          `SELECT id, project_id FROM ${table}
            WHERE status = 'queued' AND trigger IN ('manual','api') AND NOT workflow_pending ${extra} AND created_at < now() - make_interval(secs => $1)
            ORDER BY created_at LIMIT $2`,
          [input.olderThanSeconds, input.limit],
        )) as Array<{ id: string; project_id: string }>;
      let started = 0;
      const restart = async (rows: Array<{ id: string; project_id: string }>, start: (r: { id: string; projectId: string }) => Promise<void>) => {
        for (const row of rows) {
          try {
            await start({ id: row.id, projectId: row.project_id });
            started += 1;
          } catch (err) {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          }
        }
      };
      await restart(await stranded('reporting_runs', ''), deps.restartRun);
      await restart(await stranded('reporting_job_runs', ''), deps.restartJobRun);
      return started;
    },

    /**
     * Agent tasks (docs/reporting.md "Agents"): a test, schema or preview task nobody leased within
     * the queue timeout fails ERR_AGENT_012 (its agent is offline); a lease that ran out is `expired`
     * (a query task's activity has timed out by then and its retry made a new task); preview files of
     * tasks that ended a day ago are deleted, and ended tasks past the run retention with them.
     */
    async expireAgentTasks(input: { queueTimeoutSeconds: number; runRetentionDays: number; limit: number }): Promise<number> {
      const { failed, expired } = await sweepAgentTasks(db, { queueTimeoutSeconds: input.queueTimeoutSeconds, limit: input.limit });
      const files: Array<{ id: string; result_key: string }> = await db.query(
        `SELECT id, result_key FROM reporting_agent_tasks
          WHERE run_id IS NULL AND result_key IS NOT NULL AND completed_at < now() - interval '1 day' ORDER BY completed_at LIMIT $1`,
        [input.limit],
      );
      for (const f of files) {
        await storage.delete(f.result_key);
        await db.query(`UPDATE reporting_agent_tasks SET result_key = NULL WHERE id = $1`, [f.id]);
      }
      const deleted = await db.query(
        `DELETE FROM reporting_agent_tasks WHERE id IN (SELECT id FROM reporting_agent_tasks
          WHERE status IN ('completed', 'failed', 'cancelled', 'expired') AND (result_key IS NULL OR run_id IS NOT NULL)
            AND coalesce(completed_at, created_at) < now() - make_interval(days => $1) ORDER BY created_at LIMIT $2)`,
        [input.runRetentionDays, input.limit],
      );
      const count = (r: unknown) => (Array.isArray(r) && typeof r[1] === 'number' ? r[1] : 0);
      return count(failed) + count(expired) + files.length + count(deleted);
    },
  };
}
export type ReportMaintenanceActivities = ReturnType<typeof createReportMaintenanceActivities>;
