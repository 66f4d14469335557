import { expireOpenApprovals, openApprovals, recordApprovalDecision } from '../../../db/flow/approval-state';
import { approvalIn, openStateDb, rowOf, runIn, type StateDb } from '../../support/state-rows';

/** db/flow/approval-state.ts, the only writer of flow_approvals.status, against Postgres. */
describe('Flow approval state owner', () => {
  let s: StateDb;
  beforeAll(async () => {
    s = await openStateDb();
  });
  afterAll(() => s.close());

  it('opens one pending approval per approver, however often it is asked', async () => {
    const runId = await runIn(s, 'validated');
    const approvers = new Map([['a@example.com', 'A'], ['b@example.com', null]]);
    await openApprovals(s.db, { runId, gateId: s.gateId, projectId: s.projectId, approvers, windowMs: 60_000 });
    await openApprovals(s.db, { runId, gateId: s.gateId, projectId: s.projectId, approvers, windowMs: 60_000 });
    const rows = await s.db.query(`SELECT approver_email, status FROM flow_approvals WHERE run_id = $1 ORDER BY approver_email`, [runId]);
    expect(rows).toEqual([{ approver_email: 'a@example.com', status: 'pending' }, { approver_email: 'b@example.com', status: 'pending' }]);
  });

  it('takes one decision; a second one, or an expiry afterwards, leaves the decided row as it was', async () => {
    const runId = await runIn(s, 'review_required');
    const id = await approvalIn(s, runId, 'pending', 'decider@example.com');
    expect(await recordApprovalDecision(s.db, { approvalId: id, approverEmail: 'decider@example.com', decision: 'approved', comment: 'fine' })).toEqual({ run_id: runId, approver_email: 'decider@example.com' });
    const decided = await rowOf(s.db, 'flow_approvals', id);
    expect(decided).toMatchObject({ status: 'approved', comment: 'fine', magic_token_hash: null });

    expect(await recordApprovalDecision(s.db, { approvalId: id, approverEmail: 'decider@example.com', decision: 'rejected', comment: 'changed my mind' })).toBeUndefined();
    expect(await expireOpenApprovals(s.db, runId)).toEqual([]);
    expect(await rowOf(s.db, 'flow_approvals', id)).toEqual(decided);
  });

  it('lets only the approver on record decide', async () => {
    const runId = await runIn(s, 'review_required');
    const id = await approvalIn(s, runId, 'pending', 'right@example.com');
    const before = await rowOf(s.db, 'flow_approvals', id);
    expect(await recordApprovalDecision(s.db, { approvalId: id, approverEmail: 'wrong@example.com', decision: 'approved', comment: null })).toBeUndefined();
    expect(await rowOf(s.db, 'flow_approvals', id)).toEqual(before);
  });

  it.each(['approved', 'rejected', 'expired'] as const)('never moves an approval once %s', async (status) => {
    const runId = await runIn(s, 'review_required');
    const id = await approvalIn(s, runId, status, 'someone@example.com');
    const before = await rowOf(s.db, 'flow_approvals', id);
    for (const decision of ['approved', 'rejected'] as const) {
      expect(await recordApprovalDecision(s.db, { approvalId: id, approverEmail: 'someone@example.com', decision, comment: 'late' })).toBeUndefined();
    }
    expect(await rowOf(s.db, 'flow_approvals', id)).toMatchObject({ status, comment: null });
    const { magic_token_hash: _cleared, ...rest } = before;
    // Closing the run clears every link of the run, decided or not; the status stays.
    expect(await expireOpenApprovals(s.db, runId)).toEqual([]);
    expect(await rowOf(s.db, 'flow_approvals', id)).toEqual({ ...rest, magic_token_hash: null });
  });

  it('expires the approvals still open when the run is closed', async () => {
    const runId = await runIn(s, 'review_required');
    const open = await approvalIn(s, runId, 'pending', 'late@example.com');
    await approvalIn(s, runId, 'approved', 'early@example.com');
    expect(await expireOpenApprovals(s.db, runId)).toEqual(['late@example.com']);
    expect(await rowOf(s.db, 'flow_approvals', open)).toMatchObject({ status: 'expired', magic_token_hash: null });
  });
});
