import { randomUUID } from 'node:crypto';
import { completeRunIfDelivered, insertRun, moveRun } from '../../../db/flow/run-state';
import { RunEntity } from '../../../db/flow/run.entity';
import { openStateDb, rowOf, runIn, type StateDb } from '../../support/state-rows';

/** db/flow/run-state.ts, the only writer of flow_runs.status, against Postgres. */
describe('Flow run state owner', () => {
  let s: StateDb;
  beforeAll(async () => {
    s = await openStateDb();
  });
  afterAll(() => s.close());

  it('moves a run along the table, with the fields that go with the move, once', async () => {
    const id = await runIn(s, 'rendering');
    expect(await moveRun(s.db, { runId: id, status: 'failed', error: 'Render failed: boom', finished: true })).toBe(true);
    const row = await rowOf(s.db, 'flow_runs', id);
    expect(row).toMatchObject({ status: 'failed', error: 'Render failed: boom', workflow_pending: false });
    expect(row.completed_at).toBeInstanceOf(Date);
    expect(row.workflow_started_at).toBeInstanceOf(Date);
    // The same move again (a retried activity) finds the run already there: nothing changes.
    expect(await moveRun(s.db, { runId: id, status: 'failed', error: 'other' })).toBe(false);
    expect(await rowOf(s.db, 'flow_runs', id)).toEqual(row);
  });

  it.each([
    ['rejected', 'approved'],
    ['completed', 'failed'],
    ['validated', 'approved'],
    ['review_required', 'delivering'],
    ['validation_failed', 'validated'],
  ] as const)('refuses %s → %s and leaves the row as it was', async (from, to) => {
    const id = await runIn(s, from);
    const before = await rowOf(s.db, 'flow_runs', id);
    expect(await moveRun(s.db, { runId: id, status: to, approvalStatus: to, deliveryStatus: 'delivering', error: 'x', finished: true })).toBe(false);
    expect(await rowOf(s.db, 'flow_runs', id)).toEqual(before);
  });

  it('completes after a manual delivery retry only a failed run, not one still delivering', async () => {
    const delivering = await runIn(s, 'delivering', { deliveryStatus: 'failed' });
    const failed = await runIn(s, 'failed', { deliveryStatus: 'failed' });
    const deliveryOf = async (runId: string) => {
      const id = randomUUID();
      await s.db.query(
        `INSERT INTO webhook_deliveries (id, project_id, source, run_id, url, event_id, event_type, payload, status, attempts)
         VALUES ($1, $2, 'flow', $3, 'https://hooks.example.com/x', $4, 'flow.run.completed', '{}', 'completed', '[]')`,
        [id, s.projectId, runId, randomUUID()],
      );
      return id;
    };
    const before = await rowOf(s.db, 'flow_runs', delivering);
    expect(await completeRunIfDelivered(s.db, await deliveryOf(delivering))).toBe(false);
    expect(await rowOf(s.db, 'flow_runs', delivering)).toEqual(before);
    expect(await completeRunIfDelivered(s.db, await deliveryOf(failed))).toBe(true);
    expect(await rowOf(s.db, 'flow_runs', failed)).toMatchObject({ status: 'completed', delivery_status: 'completed', error: null });
  });

  it('creates a run only in an initial status', async () => {
    const now = new Date();
    const run = Object.assign(new RunEntity(), {
      id: randomUUID(), shortId: 'frun_state_test', gateId: s.gateId, projectId: s.projectId, schemaVersion: 1, source: 'rest' as const,
      inputPayload: {}, validation: { valid: true }, metadata: null, workflowPending: false, createdAt: now, completedAt: now,
    });
    await expect(insertRun(s.db, { ...run, status: 'approved' })).rejects.toThrow('a run is not created approved');
    expect(await rowOf(s.db, 'flow_runs', run.id)).toBeUndefined();
    await insertRun(s.db, { ...run, status: 'completed' });
    expect(await rowOf(s.db, 'flow_runs', run.id)).toMatchObject({ status: 'completed' });
  });
});
