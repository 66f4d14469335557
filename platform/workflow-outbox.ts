import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import pLimit from 'p-limit';
import type { Queryable } from '../db/sql';
import type { Config } from '../domain/config';
import type { AccountEmailInput } from '../workflows/identity/account-email.workflow';
import type { Logger } from '../domain/logger';
import { DELETION_REQUEST_TOKEN_SQL } from '../domain/identity/account-deletion';
import { signalNames, workflowIds, type TaskQueues } from '../domain/temporal-names';
import {
  flowRunWorkflowInput,
  startAccountDeletion,
  startAccountEmail,
  startDocumentBatch,
  startDocumentJob,
  startFlowRun,
  startMergeJob,
  startInvitationEmail,
  startJobRunWorkflow,
  startReportDeliveryRetry,
  startReportRun,
  type ReportRunStartDeps,
  type WorkflowStartDeps,
} from './workflow-starts';
import type { ApprovalDecision } from '../workflows/flow/approval-signals';

/**
 * Starts the workflows of records the API accepted without putting Temporal on the response path,
 * and without ever losing one (docs/architecture.md, "Starting workflows"): a transactional outbox.
 *
 * - the record is committed with its mark (`workflow_pending = true`, or a row in
 *   `account_email_starts` for an e-mail, which has no record of its own) in the same transaction;
 * - the API then starts the workflow in the background (`start`), retrying a few times, with
 *   bounded concurrency so a burst queues here instead of flooding the Temporal frontend; a start
 *   clears the mark;
 * - every main worker sweeps (`sweep`) at start-up and every OUTBOX_SWEEP_INTERVAL_SECONDS for marks
 *   older than OUTBOX_SWEEP_GRACE_SECONDS, oldest first: what a crashed or partitioned API replica left behind.
 *   A sweep claims its rows (`FOR UPDATE SKIP LOCKED`, CLAIM_BATCH at a time, in a transaction held while
 *   it starts them, SWEEP_IN_FLIGHT at once) and clears the marks of those it started before it commits:
 *   workers sweeping together take different rows, so none starts what another is starting.
 *
 * Workflow ids are the records' ids, so starting twice (API and sweep racing) is harmless: an
 * "already started" answer counts as started. Used by the API and the worker alike.
 */

export type OutboxKind =
  | 'flowRun'
  | 'documentJob'
  | 'documentMerge'
  | 'documentBatch'
  | 'accountDeletion'
  | 'accountEmail'
  | 'invitation'
  | 'reportRun'
  | 'reportJobRun'
  | 'reportDeliveryRetry'
  | 'approvalNudge';

/**
 * One record whose workflow is to be started (or, `approvalNudge`, signalled): its id (and project,
 * for the search attributes). A delivery retry's id is `<deliveryId>:<retry number>` (`deliveryRetryEntry`).
 */
export interface OutboxEntry {
  kind: OutboxKind;
  id: string;
  projectId?: string | null;
}

export interface WorkflowOutboxDeps {
  db: DataSource;
  temporal: Client;
  taskQueues: TaskQueues;
  logger: Logger;
  config: WorkflowStartDeps['config'] &
    ReportRunStartDeps['config'] & { users: Pick<Config['users'], 'deletionGraceSeconds'>; outbox: Config['outbox'] };
}

export interface WorkflowOutbox {
  /** Starts a committed record's workflow in the background. */
  start(entry: OutboxEntry): void;
  /**
   * Starts it now and clears its mark; throws when Temporal refuses (the maintenance restart of
   * stranded records, which passes the grace period its schedule was given).
   */
  startNow(entry: OutboxEntry, options?: StartOptions): Promise<void>;
  /** Starts every mark older than `graceMs` (OUTBOX_SWEEP_GRACE_SECONDS), oldest first per kind; resolves to how many were started. */
  sweep(graceMs?: number): Promise<number>;
  /** Resolves once nothing is queued or in flight (tests, shutdown). */
  idle(): Promise<void>;
  /**
   * Starts nothing more (the marks stay for the sweep) and resolves once the starts in flight have
   * settled, so the Temporal connection can be closed after it: a start that failed and is waiting
   * to retry would otherwise retry on the closed channel, and @temporalio/client's retry throws
   * that error from a timer, uncaught ("Channel has been shut down"), ending the process with a crash.
   */
  stop(): Promise<void>;
}

/** Rows one sweep transaction claims: it holds their locks while it starts them. */
const CLAIM_BATCH = 100;
/** Starts a sweep has in flight at once. */
const SWEEP_IN_FLIGHT = 16;
const RETRY_DELAYS_MS = [250, 1000, 4000];
const MAX_IN_FLIGHT = 8;
/** Past this many queued starts the rest are left to the sweep (the marks are safe in Postgres). */
const MAX_QUEUED = 10_000;
/**
 * Each start's deadline, its gRPC retries included (the client retries an unreachable frontend
 * for about 20 s otherwise): what `stop` may have to wait for while Temporal cannot be reached.
 */
const START_DEADLINE_MS = 10_000;
/** `stop` waits at most this long: the deadline plus the longest retry interval the client waits (5 s, jittered). */
const STOP_WAIT_MS = START_DEADLINE_MS + 6_000;

export interface StartOptions {
  /** An account deletion's grace period (ACCOUNT_DELETION_GRACE_SECONDS unless given). */
  deletionGraceSeconds?: number;
}

/** A row a sweep claimed: its id and project, and for some kinds what their start needs. */
interface ClaimedRow {
  id: string;
  project_id: string | null;
  /** Approval nudges: the run to tell, and the decision. */
  run_id?: string;
  decision?: ApprovalDecision['decision'];
  /** Account e-mails: the row's workflow id and input. */
  workflow_id?: string;
  input?: AccountEmailInput;
  /** Account deletions: seconds since the request, or null when the deletion is no longer pending; the request's token. */
  elapsed?: number | null;
  token?: string | null;
}

interface KindSpec {
  /**
   * Marks older than $1 ms, oldest first, at most $2 rows: `id` and `project_id`, locked for the
   * caller's transaction and skipping rows another transaction holds.
   */
  claim: string;
  /**
   * Starts the workflow (throws when Temporal refuses or cannot be reached). A sweep passes the row it
   * claimed, which holds what the start needs: a sweep reads nothing more while it holds its claim (with
   * a pool of one, as under `npm start`'s embedded database, a second connection would never come).
   */
  start(entry: OutboxEntry, options: StartOptions, claimed?: ClaimedRow): Promise<void>;
  /** Clears the marks of the ids `$1` (an array) once their workflows started. */
  clear: string;
}

/**
 * Records an account e-mail to send (in the caller's transaction when given its manager, so a
 * sign-up and its verification e-mail commit together); `outbox.start` the entry after commit.
 * Without a workflow id the e-mail gets a fresh one (`workflowIds.accountEmail`).
 */
export async function recordAccountEmail(db: Queryable, input: AccountEmailInput, workflowId?: string): Promise<OutboxEntry> {
  const id = randomUUID();
  await db.query(`INSERT INTO account_email_starts (id, workflow_id, input) VALUES ($1, $2, $3::jsonb)`, [id, workflowId ?? workflowIds.accountEmail(id), JSON.stringify(input)]);
  return { kind: 'accountEmail', id };
}

/** The outbox entry of a delivery's manual retry number `retry`. */
export const deliveryRetryEntry = (delivery: { id: string; projectId: string }, retry: number): OutboxEntry => ({ kind: 'reportDeliveryRetry', id: `${delivery.id}:${retry}`, projectId: delivery.projectId });

const olderThan = (column: string) => `${column} <= now() - $1 * interval '1 millisecond'`;

function kindSpecs(deps: WorkflowOutboxDeps): Record<OutboxKind, KindSpec> {
  const ignoreStarted = async (start: Promise<void>) => {
    try {
      await start;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };
  /** A table whose rows carry `workflow_pending` (and a project): the oldest stranded first; cleared once started. */
  const pendingRows = (table: string, start: (id: string, projectId: string) => Promise<void>, where = 'true'): KindSpec => ({
    claim: `SELECT id, project_id FROM ${table} WHERE workflow_pending AND ${where} AND ${olderThan('created_at')} ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    start: (e) => ignoreStarted(start(e.id, e.projectId!)),
    clear: `UPDATE ${table} SET workflow_pending = false, workflow_started_at = coalesce(workflow_started_at, now()) WHERE id = ANY($1)`,
  });
  return {
    flowRun: pendingRows('flow_runs', (id, projectId) => startFlowRun({ temporal: deps.temporal, taskQueue: deps.taskQueues.main }, { id, projectId }, flowRunWorkflowInput(deps))),
    documentJob: pendingRows('document_jobs', (id, projectId) => startDocumentJob(deps, { id, projectId }), `kind = 'render'`),
    // A merge job's workflow is another (workflows/documents/merge-document.workflow.ts); same table, same mark.
    documentMerge: pendingRows('document_jobs', (id, projectId) => startMergeJob(deps, { id, projectId }), `kind = 'merge'`),
    documentBatch: pendingRows('document_batches', (id, projectId) => startDocumentBatch(deps, { id, projectId })),
    invitation: pendingRows('invitations', (id, projectId) => startInvitationEmail(deps, { id, projectId })),
    accountDeletion: {
      claim: `SELECT id, NULL AS project_id,
                     CASE WHEN deletion_status = 'pending' THEN extract(epoch FROM now() - deletion_requested_at)::float END AS elapsed,
                     ${DELETION_REQUEST_TOKEN_SQL} AS token
                FROM users WHERE deletion_workflow_pending AND ${olderThan('deletion_requested_at')}
               ORDER BY deletion_requested_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      start: (e, o, claimed) => startDeletion(deps, e.id, o.deletionGraceSeconds ?? deps.config.users.deletionGraceSeconds, claimed),
      clear: `UPDATE users SET deletion_workflow_pending = false WHERE id = ANY($1)`,
    },
    reportRun: pendingRows('reporting_runs', (id, projectId) => startReportRun(deps, { id, projectId })),
    reportJobRun: pendingRows('reporting_job_runs', (id, projectId) => startJobRunWorkflow(deps, { id, projectId })),
    reportDeliveryRetry: {
      // The entry names the retry (`<id>:<n>`): a clear never takes the mark of a later retry of the same delivery.
      claim: `SELECT id::text || ':' || manual_retries AS id, project_id FROM reporting_deliveries
               WHERE ${olderThan('retry_pending_since')} ORDER BY retry_pending_since LIMIT $2 FOR UPDATE SKIP LOCKED`,
      start: (e) => {
        const [deliveryId, retry] = e.id.split(':');
        return ignoreStarted(startReportDeliveryRetry(deps, { deliveryId, retry: Number(retry), projectId: e.projectId! }));
      },
      clear: `UPDATE reporting_deliveries SET retry_pending_since = NULL
               WHERE id = ANY(SELECT split_part(x, ':', 1)::uuid FROM unnest($1::text[]) x) AND id::text || ':' || manual_retries = ANY($1)`,
    },
    approvalNudge: {
      claim: `SELECT id, project_id, run_id, status AS decision FROM flow_approvals WHERE signal_pending AND ${olderThan('decided_at')} ORDER BY decided_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      start: async (e, _o, claimed) => {
        type Nudge = { run_id: string; decision: ApprovalDecision['decision'] };
        const [row] = claimed ? [claimed as Nudge] : ((await deps.db.query(`SELECT run_id, status AS decision FROM flow_approvals WHERE id = $1`, [e.id])) as Nudge[]);
        if (!row) return;
        try {
          // "Look again": the run's workflow re-reads the decisions (workflows/flow/approval.ts).
          await deps.temporal.workflow.getHandle(workflowIds.flowRun(row.run_id)).signal<[ApprovalDecision]>(signalNames.approvalDecision, { approvalId: e.id, decision: row.decision });
        } catch (err) {
          // The run's workflow has ended (or never ran): nobody is waiting for the nudge.
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      },
      clear: `UPDATE flow_approvals SET signal_pending = false WHERE id = ANY($1)`,
    },
    accountEmail: {
      claim: `SELECT id, NULL AS project_id, workflow_id, input FROM account_email_starts WHERE ${olderThan('created_at')} ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      start: async (e, _o, claimed) => {
        const [row] = claimed
          ? [claimed as { workflow_id: string; input: AccountEmailInput }]
          : ((await deps.db.query(`SELECT workflow_id, input FROM account_email_starts WHERE id = $1`, [e.id])) as Array<{ workflow_id: string; input: AccountEmailInput }>);
        // Started and cleared by a racing API replica or sweep.
        if (row) await ignoreStarted(startAccountEmail(deps, row.input, row.workflow_id));
      },
      // The row holds the input (an address for a reset), so it goes once the workflow has it.
      clear: `DELETE FROM account_email_starts WHERE id = ANY($1)`,
    },
  };
}

/**
 * The deletion's workflow gets what is left of the grace period counted from the request, so a
 * late start keeps the purge date the user was told. The request goes with signal-with-start: a run
 * of an earlier request still waiting (its restore signal never arrived) takes this request and its
 * purge date instead of purging on its old timer, and the API and a sweep sending the same request
 * change nothing (docs/architecture.md "Starting workflows"). A deletion that is not pending any more
 * (restored before the start) starts nothing.
 */
async function startDeletion(deps: WorkflowOutboxDeps, userId: string, graceSeconds: number, claimed?: Pick<ClaimedRow, 'elapsed' | 'token'>): Promise<void> {
  const [request] = claimed
    ? claimed.elapsed === null || claimed.elapsed === undefined
      ? []
      : [{ elapsed: claimed.elapsed, token: claimed.token! }]
    : ((await deps.db.query(
        `SELECT extract(epoch FROM now() - deletion_requested_at)::float AS elapsed, ${DELETION_REQUEST_TOKEN_SQL} AS token FROM users WHERE id = $1 AND deletion_status = 'pending'`,
        [userId],
      )) as Array<{ elapsed: number; token: string }>);
  if (!request) return;
  const left = Math.max(0, graceSeconds - request.elapsed);
  await startAccountDeletion(deps, { userId, graceSeconds: Math.ceil(left), requestToken: request.token }, new Date(Date.now() + left * 1000));
}

export function createWorkflowOutbox(deps: WorkflowOutboxDeps): WorkflowOutbox {
  const specs = kindSpecs(deps);
  const queue: Array<{ entry: OutboxEntry; attempt: number }> = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let stopped = false;
  let idleWaiters: Array<() => void> = [];
  /** Every start not yet settled, the queue's and the sweep's. */
  const starting = new Set<Promise<unknown>>();

  /** Starts the entry's workflow; its mark stays for the caller to clear. */
  function startOnly(entry: OutboxEntry, options: StartOptions = {}, claimed?: ClaimedRow): Promise<void> {
    const started = deps.temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () => specs[entry.kind].start(entry, options, claimed));
    const settled = started.catch(() => undefined);
    starting.add(settled);
    void settled.then(() => starting.delete(settled));
    return started;
  }

  async function startOne(entry: OutboxEntry, options: StartOptions = {}): Promise<void> {
    await startOnly(entry, options);
    await deps.db.query(specs[entry.kind].clear, [[entry.id]]);
  }

  /**
   * One claim of a sweep: up to CLAIM_BATCH marks of `kind` locked in a transaction, their workflows
   * started SWEEP_IN_FLIGHT at a time, the marks of those started cleared, then the commit (which
   * releases the rest for the next pass). A failed start is logged and stays marked.
   */
  async function sweepClaim(kind: OutboxKind, graceMs: number): Promise<{ claimed: number; started: number }> {
    return deps.db.transaction(async (m) => {
      const rows: ClaimedRow[] = await m.query(specs[kind].claim, [graceMs, CLAIM_BATCH]);
      const started: string[] = [];
      const limit = pLimit(SWEEP_IN_FLIGHT);
      const startRow = async (row: ClaimedRow) => {
        if (stopped) return;
        try {
          await startOnly({ kind, id: row.id, projectId: row.project_id }, {}, row);
          started.push(row.id);
        } catch (err) {
          deps.logger.warn('outbox sweep could not start a workflow', { kind, id: row.id, err });
        }
      };
      await Promise.all(rows.map((row) => limit(() => startRow(row))));
      if (started.length > 0) await m.query(specs[kind].clear, [started]);
      return { claimed: rows.length, started: started.length };
    });
  }

  function settleIdle(): void {
    if (inFlight === 0 && queue.length === 0 && timers.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  function pump(): void {
    while (!stopped && inFlight < MAX_IN_FLIGHT && queue.length > 0) {
      const item = queue.shift()!;
      inFlight += 1;
      startOne(item.entry)
        .catch((err) => {
          const delay = RETRY_DELAYS_MS[item.attempt];
          if (delay === undefined || stopped) {
            deps.logger.warn('workflow not started; the sweep will retry', { kind: item.entry.kind, id: item.entry.id, err });
            return;
          }
          const timer = setTimeout(() => {
            timers.delete(timer);
            enqueue(item.entry, item.attempt + 1);
          }, delay);
          timer.unref();
          timers.add(timer);
        })
        .finally(() => {
          inFlight -= 1;
          pump();
          settleIdle();
        });
    }
  }

  function enqueue(entry: OutboxEntry, attempt: number): void {
    if (stopped || queue.length >= MAX_QUEUED) return settleIdle();
    queue.push({ entry, attempt });
    pump();
  }

  return {
    start(entry) {
      const delay = deps.config.outbox.startDelayMs;
      if (delay === 0) return enqueue(entry, 0);
      // OUTBOX_START_DELAY_MS, test-only: the kill tests' window between the answer and the start.
      const timer = setTimeout(() => {
        timers.delete(timer);
        enqueue(entry, 0);
      }, delay);
      timer.unref();
      timers.add(timer);
    },
    startNow: startOne,

    async sweep(graceMs = deps.config.outbox.sweepGraceMs) {
      let started = 0;
      for (const kind of Object.keys(specs) as OutboxKind[]) {
        // Claim after claim until a claim finds fewer rows than it asked for, or starts none (Temporal
        // is down: the next pass tries again). Stopping: the rest stay marked for the next sweep.
        while (!stopped) {
          const claim = await sweepClaim(kind, graceMs);
          started += claim.started;
          if (claim.claimed < CLAIM_BATCH || claim.started === 0) break;
        }
      }
      return started;
    },

    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      }),

    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      queue.length = 0;
      settleIdle();
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...starting]), new Promise((resolve) => (waited = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(waited);
    },
  };
}

/** The worker's periodic sweep: once at start-up, then every `intervalMs` (OUTBOX_SWEEP_INTERVAL_SECONDS) until stopped. */
export function startOutboxSweeper(outbox: WorkflowOutbox, logger: Logger, intervalMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      const n = await outbox.sweep();
      if (n > 0) logger.info('outbox sweep started pending workflows', { started: n });
    } catch (err) {
      logger.warn('outbox sweep failed', { err });
    }
    if (!stopped) {
      timer = setTimeout(() => void tick(), intervalMs);
      timer.unref();
    }
  };
  void tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
