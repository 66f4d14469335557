import type { DataSource } from 'typeorm';
import { openDatabase } from '../../../db/data-source';
import { closeRunApprovals, recordApprovalDecision } from '../../../db/flow/approval-state';
import type { ApprovalStatus } from '../../../domain/flow/approval-status';
import { approvalIn, openStateDb, rowOf, runIn, type StateDb } from '../../support/state-rows';
import { waitFor } from '../../support/wait';

/**
 * The close of a run's approval (db/flow/approval-state.ts closeRunApprovals, in closeApproval's
 * transaction) against Postgres: it decides the outcome from the rows it locks, and of a decision
 * and the close racing, whichever commits first wins, so the decision's answer and the run's
 * outcome agree.
 */
describe('Flow approval close', () => {
  let s: StateDb;
  /** A second pool, for the transaction that holds the locks and the statement that waits for them. */
  let other: DataSource;

  beforeAll(async () => {
    s = await openStateDb();
    other = await openDatabase((s.db.options as { url: string }).url, 2);
  });
  afterAll(async () => {
    await other?.destroy();
    await s?.close();
  });

  /** Resolves once a statement of another backend waits for a lock that backend `pid` holds. */
  const blockedBy = (pid: number) =>
    waitFor(async () => (await s.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [pid]))[0].n > 0, {
      what: `a statement waiting for the locks of backend ${pid}`,
    });

  /** Runs `body` in a transaction of `other` left open until `body` returns; it gets the backend's pid. */
  const inOpenTransaction = async (body: (m: DataSource['manager'], pid: number) => Promise<void>) => {
    const qr = other.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    try {
      const [{ pid }] = await qr.query(`SELECT pg_backend_pid() AS pid`);
      await body(qr.manager, pid);
      await qr.commitTransaction();
    } catch (err) {
      await qr.rollbackTransaction();
      throw err;
    } finally {
      await qr.release();
    }
  };

  it.each<[string, ApprovalStatus[], number, 'reject' | 'approve', { outcome: string; timedOut: boolean }]>([
    ['2 of 3 approved', ['approved', 'approved', 'pending'], 2, 'reject', { outcome: 'approved', timedOut: false }],
    ['one rejection among approvals', ['approved', 'rejected', 'approved'], 2, 'approve', { outcome: 'rejected', timedOut: false }],
    ['1 of 2 approved, onTimeout reject', ['approved', 'pending'], 2, 'reject', { outcome: 'expired', timedOut: true }],
    ['1 of 2 approved, onTimeout approve', ['approved', 'pending'], 2, 'approve', { outcome: 'approved', timedOut: true }],
  ])('decides from the rows: %s', async (_name, statuses, requiredApprovals, onTimeout, expected) => {
    const runId = await runIn(s, 'review_required');
    const ids = await Promise.all(statuses.map((status) => approvalIn(s, runId, status)));
    const pending = statuses.filter((status) => status === 'pending').length;
    const closed = await s.db.transaction((m) => closeRunApprovals(m, { runId, requiredApprovals, onTimeout }));
    expect({ outcome: closed.outcome, timedOut: closed.timedOut, expired: closed.expired.length }).toEqual({ ...expected, expired: pending });
    for (const [i, id] of ids.entries()) expect((await rowOf(s.db, 'flow_approvals', id)).status).toBe(statuses[i] === 'pending' ? 'expired' : statuses[i]);
    // A retried close answers the same and expires nothing more.
    expect(await s.db.transaction((m) => closeRunApprovals(m, { runId, requiredApprovals, onTimeout }))).toEqual({ ...closed, expired: [] });
  });

  it('a close that locked first wins: the decision waiting for it is refused, and the outcome is expired', async () => {
    const runId = await runIn(s, 'review_required');
    const id = await approvalIn(s, runId, 'pending', 'late@example.com');
    let decision: Promise<unknown> | undefined;
    await inOpenTransaction(async (m, pid) => {
      expect(await closeRunApprovals(m, { runId, requiredApprovals: 1, onTimeout: 'reject' })).toEqual({ outcome: 'expired', timedOut: true, expired: ['late@example.com'] });
      decision = recordApprovalDecision(other, { approvalId: id, approverEmail: 'late@example.com', decision: 'approved', comment: 'just in time?' });
      await blockedBy(pid);
    });
    expect(await decision).toBeUndefined();
    expect(await rowOf(s.db, 'flow_approvals', id)).toMatchObject({ status: 'expired', comment: null });
  });

  it('a decision that committed first wins: the close waiting for it counts it, and the outcome is approved', async () => {
    const runId = await runIn(s, 'review_required');
    const id = await approvalIn(s, runId, 'pending', 'early@example.com');
    let close: Promise<unknown> | undefined;
    await inOpenTransaction(async (m, pid) => {
      expect(await recordApprovalDecision(m, { approvalId: id, approverEmail: 'early@example.com', decision: 'approved', comment: 'in time' })).toEqual({ run_id: runId, approver_email: 'early@example.com' });
      close = other.transaction((c) => closeRunApprovals(c, { runId, requiredApprovals: 1, onTimeout: 'reject' }));
      await blockedBy(pid);
    });
    expect(await close).toEqual({ outcome: 'approved', timedOut: false, expired: [] });
    expect(await rowOf(s.db, 'flow_approvals', id)).toMatchObject({ status: 'approved', comment: 'in time' });
  });

  it('refuses a decision once the approval window has passed, though the approval is still pending', async () => {
    const runId = await runIn(s, 'review_required');
    const id = await approvalIn(s, runId, 'pending', 'slow@example.com');
    await s.db.query(`UPDATE flow_approvals SET magic_token_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    expect(await recordApprovalDecision(s.db, { approvalId: id, approverEmail: 'slow@example.com', decision: 'approved', comment: null })).toBeUndefined();
    expect(await rowOf(s.db, 'flow_approvals', id)).toMatchObject({ status: 'pending' });
  });
});
