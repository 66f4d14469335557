import type { DataSource } from 'typeorm';

/**
 * What the domains' maintenance sweeps share for accepted work whose workflow is not running
 * (docs/architecture.md "Starting workflows", step 4): open records without an outbox mark are read
 * oldest first a page at a time and checked against Temporal with one visibility query per page.
 * Each domain sweeps its own kinds (activities/documents: jobs, merges, batches;
 * activities/identity: account deletions) and decides what a stranded record of its kind becomes.
 */

/** An open record a maintenance sweep checks against Temporal. */
export interface StrandedRecord {
  kind: 'documentJob' | 'documentMerge' | 'documentBatch' | 'accountDeletion';
  id: string;
  projectId: string | null;
}

/** Temporal as the sweeps of stranded work see it (worker/maintenance.ts builds it from the client and the outbox). */
export interface StrandedWorkPort {
  /** Starts an open record's workflow now (the outbox's launcher for that kind: id = the record's id). */
  startWorkflowOf: (record: StrandedRecord, options: { deletionGraceSeconds?: number }) => Promise<void>;
  /** Whether the record's workflow runs, has closed, or is unknown to Temporal (never started, or its history is gone). */
  workflowStateOf: (record: StrandedRecord) => Promise<'running' | 'closed' | 'missing'>;
  /**
   * Of records of one kind, the ids whose workflow visibility lists as running: one visibility query
   * for the lot. Visibility lags behind (a just-started run may be missing): what it leaves out is
   * asked again with `workflowStateOf`, never acted on from the list alone.
   */
  runningAmong: (kind: StrandedRecord['kind'], ids: string[]) => Promise<Set<string>>;
}

/** Open records of one kind without an outbox mark: their table, when each was accepted, its project, and what "open" means. */
export interface OpenRecords {
  table: string;
  at: string;
  project: string;
  open: string;
}

/** Open records one visibility query checks (its query names each workflow id). */
const STRANDED_PAGE = 200;
/** Pages per kind in one maintenance pass: 10,000 open records; the next pass (every few minutes) goes on from the start. */
const STRANDED_MAX_PAGES = 50;

/**
 * Open records of `kind` accepted more than `olderThanSeconds` ago, oldest first, keyset-paged: the
 * ones visibility lists as running are left alone (so stranded records behind thousands of running
 * ones are reached in the same pass), each other one is described and, unless it runs after all,
 * handed to `handle` with its workflow's state. Returns how many were handed over.
 */
export async function sweepStrandedRecords(
  db: DataSource,
  temporal: Pick<StrandedWorkPort, 'runningAmong' | 'workflowStateOf'>,
  kind: StrandedRecord['kind'],
  records: OpenRecords,
  olderThanSeconds: number,
  handle: (record: StrandedRecord, state: 'closed' | 'missing') => Promise<void>,
): Promise<number> {
  const { table, at, project, open } = records;
  let handled = 0;
  // Keyset paging; `at` as text keeps its microseconds (a Date would drop them and read a row twice).
  let after: { at: string; id: string } | null = null;
  for (let page = 0; page < STRANDED_MAX_PAGES; page += 1) {
    const rows: Array<{ id: string; project_id: string | null; at: string }> = await db.query(
      `SELECT id, ${project} AS project_id, ${at}::text AS at FROM ${table}
        WHERE ${open} AND ${at} < now() - make_interval(secs => $1) AND ($2::timestamptz IS NULL OR (${at}, id) > ($2::timestamptz, $3::uuid))
        ORDER BY ${at}, id LIMIT $4`,
      [olderThanSeconds, after?.at ?? null, after?.id ?? null, STRANDED_PAGE],
    );
    if (rows.length === 0) break;
    after = { at: rows[rows.length - 1].at, id: rows[rows.length - 1].id };
    const running = await temporal.runningAmong(kind, rows.map((r) => r.id));
    for (const row of rows) {
      if (running.has(row.id)) continue;
      const record: StrandedRecord = { kind, id: row.id, projectId: row.project_id };
      const state = await temporal.workflowStateOf(record);
      if (state === 'running') continue;
      await handle(record, state);
      handled += 1;
    }
    if (rows.length < STRANDED_PAGE) break;
  }
  return handled;
}
