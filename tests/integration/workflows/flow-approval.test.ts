import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { AttemptDeliveryInput } from '../../../activities/webhooks/attempt-delivery.activity';
import { closedOutcome } from '../../../domain/flow/approval-outcome';
import { workflowIds } from '../../../domain/temporal-names';
import { approvalDecisionSignal } from '../../../workflows/flow/approval-signals';
import type { flowRunWorkflow } from '../../../workflows/flow/flow-run.workflow';
import { waitFor } from '../../support/wait';
import { startWorkflowHarness, type WorkflowHarness } from './harness';

type Decision = 'approved' | 'rejected';
type ApprovalStatus = 'pending' | Decision | 'expired';
interface Closed {
  runId: string;
  outcome: string;
  timedOut: boolean;
}

interface GateSettings {
  approvers: string[];
  requiredApprovals?: number;
  timeoutMinutes: number;
  onTimeout: 'reject' | 'approve';
  /** Milliseconds in a Flow minute, as openApproval answers from FLOW_MINUTE_MS. */
  minuteMs: number;
}

/**
 * The approval wait of a Flow run (docs/flow.md, "Approvals") in the real run workflow, with its
 * activities stubbed: the stubs keep each run's approvals in memory the way flow_approvals does
 * (a decision counts only while its approval is pending; closing expires the pending ones and
 * decides the outcome from what was decided, in one step as the real close does under its row
 * locks), and `decide` plays the API: record the decision, then signal the run. The API also
 * refuses a decision past the link's expiry; the stub leaves that out, so that decisions race the
 * close itself. Every run has one delivery channel, so "approved" shows as a delivery attempt and a
 * `completed` run.
 */
describe('Flow run approval wait (stubbed activities)', () => {
  let h: WorkflowHarness;
  const gates = new Map<string, GateSettings>();
  const approvals = new Map<string, Map<string, ApprovalStatus>>();
  const deliveryRuns = new Map<string, string>();
  /** What each closeApproval call answered, per run. */
  const closes = new Map<string, Closed[]>();
  /** Runs whose close answers nothing, as the activity did before it decided the outcome. */
  const legacyCloses = new Set<string>();
  /** Runs whose single approver decides when the workflow wakes at the deadline (the racing test). */
  const races = new Map<string, { deadline: number; delayMs: number; accepted?: Promise<boolean> }>();
  /**
   * A racing run's decision, made by the workflow's first activity after the deadline: usually its
   * tally read at the wake-up, but on a loaded machine the reminder can run past the deadline and
   * the workflow go straight to closeApproval (a run seen in a CI run). decide() records
   * synchronously, so with -1 that activity already sees the decision.
   */
  const raceAtWakeUp = (runId: string) => {
    const race = races.get(runId);
    if (!race || race.accepted || Date.now() < race.deadline) return;
    race.accepted = race.delayMs < 0 ? decide(runId, 'a@x.test', 'approved') : new Promise((r) => setTimeout(r, race.delayMs)).then(() => decide(runId, 'a@x.test', 'approved'));
  };

  const tally = (runId: string) => {
    const counts = { approved: 0, rejected: 0, pending: 0, expired: 0 };
    for (const status of approvals.get(runId)?.values() ?? []) counts[status] += 1;
    return counts;
  };

  beforeAll(async () => {
    h = await startWorkflowHarness('flow-approval', {
      async loadFlowRun({ runId }: { runId: string }) {
        const gate = gates.get(runId)!;
        return {
          runId,
          projectId: 'project-1',
          gateId: `gate-${runId}`,
          status: 'validated',
          renderMode: 'none',
          approvalMode: 'manual',
          approvalConfig: {
            approvers: gate.approvers.map((email) => ({ email })),
            requiredApprovals: gate.requiredApprovals,
            timeoutMinutes: gate.timeoutMinutes,
            onTimeout: gate.onTimeout,
          },
          deliveryChannelCount: 1,
        };
      },
      async updateFlowRun(_input: { runId: string }) {
        return undefined;
      },
      async openApproval({ runId }: { runId: string }) {
        const gate = gates.get(runId)!;
        const distinct = new Set(gate.approvers.map((e) => e.toLowerCase()));
        if (!approvals.has(runId)) approvals.set(runId, new Map([...distinct].map((e) => [e, 'pending' as ApprovalStatus])));
        return {
          minuteMs: gate.minuteMs,
          requiredApprovals: Math.min(Math.max(1, gate.requiredApprovals ?? 1), distinct.size),
          notificationMode: 'immediate',
          digestMinutes: 5,
        };
      },
      async readApprovalTally({ runId }: { runId: string }) {
        raceAtWakeUp(runId);
        const { approved, rejected, pending } = tally(runId);
        return { approved, rejected, pending };
      },
      async sendApprovalReminders({ runId }: { runId: string }) {
        raceAtWakeUp(runId);
        return tally(runId).pending;
      },
      async closeApproval({ runId, requiredApprovals, onTimeout }: { runId: string; requiredApprovals: number; onTimeout: 'reject' | 'approve' }) {
        raceAtWakeUp(runId);
        const run = approvals.get(runId)!;
        for (const [email, status] of run) if (status === 'pending') run.set(email, 'expired');
        const closed = { runId, ...closedOutcome(tally(runId), requiredApprovals, onTimeout) };
        closes.set(runId, [...(closes.get(runId) ?? []), closed]);
        return legacyCloses.has(runId) ? undefined : closed;
      },
      async prepareFlowDeliveries({ runId }: { runId: string }) {
        const deliveryId = randomUUID();
        deliveryRuns.set(deliveryId, runId);
        return [deliveryId];
      },
      async attemptDelivery(_input: AttemptDeliveryInput) {
        return { outcome: 'delivered', statusCode: 200 };
      },
      async abandonWebhookDelivery(_input: { deliveryId: string }) {
        return undefined;
      },
      async finishFlowDeliveries(_input: { runId: string }) {
        return 'completed';
      },
      async recordFlowRunOutcome(_input: { runId: string; outcome: string }) {
        return undefined;
      },
    });
  });
  afterAll(() => h?.close());

  const startRun = async (gate: GateSettings): Promise<{ runId: string; handle: WorkflowHandle<typeof flowRunWorkflow> }> => {
    const runId = randomUUID();
    gates.set(runId, gate);
    const handle = await h.client.workflow.start<typeof flowRunWorkflow>('flowRunWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: workflowIds.flowRun(runId),
      args: [{ runId, retryDelaysMs: [100, 100, 100], renderTaskQueue: h.taskQueue }],
    });
    await waitFor(() => approvals.has(runId), { what: 'the approvals to open' });
    return { runId, handle };
  };

  /** The API's decideApproval: only a pending approval takes a decision (else 409), then the run is signalled. */
  const decide = async (runId: string, email: string, decision: Decision): Promise<boolean> => {
    const run = approvals.get(runId)!;
    if (run.get(email) !== 'pending') return false;
    run.set(email, decision);
    try {
      await h.client.workflow.getHandle(workflowIds.flowRun(runId)).signal(approvalDecisionSignal, { approvalId: email, decision });
    } catch {
      // the run closed meanwhile; the decision is recorded all the same (the API logs this)
    }
    return true;
  };

  const callsOf = (runId: string, name: string) => h.log.about('runId', runId).filter((c) => c.name === name);
  /** The outcome each closeApproval call decided (the run goes on with it). */
  const closed = (runId: string): Closed[] => closes.get(runId) ?? [];
  const deliveriesOf = (runId: string) => h.log.calls.filter((c) => c.name === 'attemptDelivery' && deliveryRuns.get((c.input as AttemptDeliveryInput).deliveryId) === runId);
  const finalUpdates = (runId: string) => callsOf(runId, 'updateFlowRun').filter((c) => (c.input as { finished?: boolean }).finished);
  /** Resolves once the workflow has re-read the tally `n` times in all (1 when the wait starts). */
  const tallyReads = (runId: string, n: number) => waitFor(() => callsOf(runId, 'readApprovalTally').length >= n, { what: `tally read ${n}` });

  it('2 of 3 approvers: one approval keeps the run waiting, the second approves it and it delivers; the third approver is too late', async () => {
    const { runId, handle } = await startRun({ approvers: ['a@x.test', 'b@x.test', 'c@x.test'], requiredApprovals: 2, timeoutMinutes: 10, onTimeout: 'reject', minuteMs: 60_000 });

    expect(await decide(runId, 'a@x.test', 'approved')).toBe(true);
    await tallyReads(runId, 2);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(closed(runId)).toEqual([]);
    expect(deliveriesOf(runId)).toEqual([]);

    expect(await decide(runId, 'b@x.test', 'approved')).toBe(true);
    expect(await handle.result()).toBe('completed');
    expect(closed(runId)).toEqual([{ runId, outcome: 'approved', timedOut: false }]);
    expect(deliveriesOf(runId)).toHaveLength(1);
    // No reminder: the run was decided long before 80 % of its window.
    expect(callsOf(runId, 'sendApprovalReminders')).toEqual([]);
    expect(await decide(runId, 'c@x.test', 'approved')).toBe(false);
  });

  it('one rejection rejects at once, whatever the approvals so far, and nothing is delivered', async () => {
    const { runId, handle } = await startRun({ approvers: ['a@x.test', 'b@x.test', 'c@x.test'], requiredApprovals: 2, timeoutMinutes: 10, onTimeout: 'approve', minuteMs: 60_000 });

    await decide(runId, 'a@x.test', 'approved');
    await decide(runId, 'b@x.test', 'rejected');
    expect(await handle.result()).toBe('rejected');
    expect(closed(runId)).toEqual([{ runId, outcome: 'rejected', timedOut: false }]);
    expect(finalUpdates(runId).map((c) => c.input)).toEqual([{ runId, status: 'rejected', approvalStatus: 'rejected', finished: true }]);
    expect(callsOf(runId, 'prepareFlowDeliveries')).toEqual([]);
    expect(deliveriesOf(runId)).toEqual([]);
    expect(await decide(runId, 'c@x.test', 'approved')).toBe(false);
  });

  it('onTimeout reject: a window that ends short of the required approvals expires the run after one reminder, and nothing is delivered', async () => {
    // Reminder at 8 s, deadline at 10 s: a workflow task that a busy machine delays past the deadline
    // rightly sends no reminder, so the gap between the two is kept well above such a delay.
    const windowMs = 10_000;
    const { runId, handle } = await startRun({ approvers: ['a@x.test', 'b@x.test'], requiredApprovals: 2, timeoutMinutes: 1, onTimeout: 'reject', minuteMs: windowMs });
    const opened = callsOf(runId, 'openApproval')[0].at;

    await decide(runId, 'a@x.test', 'approved');
    expect(await handle.result()).toBe('expired');
    expect(closed(runId)).toEqual([{ runId, outcome: 'expired', timedOut: true }]);
    expect(callsOf(runId, 'closeApproval')[0].at - opened).toBeGreaterThanOrEqual(windowMs);
    expect(callsOf(runId, 'sendApprovalReminders')).toHaveLength(1);
    expect(finalUpdates(runId).map((c) => c.input)).toEqual([{ runId, status: 'expired', approvalStatus: 'expired', finished: true }]);
    expect(deliveriesOf(runId)).toEqual([]);
    // The approver who did not decide in time cannot any more.
    expect(await decide(runId, 'b@x.test', 'approved')).toBe(false);
  });

  it('onTimeout approve: a window that ends with nobody deciding approves the run, which then delivers', async () => {
    // Reminder at 8 s, deadline at 10 s: room for a workflow task that a busy machine delays.
    const windowMs = 10_000;
    const { runId, handle } = await startRun({ approvers: ['a@x.test'], timeoutMinutes: 1, onTimeout: 'approve', minuteMs: windowMs });
    const opened = callsOf(runId, 'openApproval')[0].at;

    expect(await handle.result()).toBe('completed');
    expect(closed(runId)).toEqual([{ runId, outcome: 'approved', timedOut: true }]);
    expect(callsOf(runId, 'closeApproval')[0].at - opened).toBeGreaterThanOrEqual(windowMs);
    expect(callsOf(runId, 'sendApprovalReminders')).toHaveLength(1);
    expect(deliveriesOf(runId)).toHaveLength(1);
    expect(await decide(runId, 'a@x.test', 'rejected')).toBe(false);
  });

  it('the wait after the reminder ends at the deadline: a decision after it that decides nothing does not restart the window', async () => {
    // Reminder at 80 % (4.8 s), deadline at 6 s. A wait restarted after the reminder (or after the
    // signal) with the whole window would close at 10.8 s or later.
    const windowMs = 6000;
    const { runId, handle } = await startRun({ approvers: ['a@x.test', 'b@x.test'], requiredApprovals: 2, timeoutMinutes: 1, onTimeout: 'reject', minuteMs: windowMs });
    const opened = callsOf(runId, 'openApproval')[0].at;

    await waitFor(() => callsOf(runId, 'sendApprovalReminders').length === 1, { timeoutMs: 20_000, what: 'the reminder' });
    const reminded = callsOf(runId, 'sendApprovalReminders')[0].at;
    expect(reminded - opened).toBeGreaterThanOrEqual(windowMs * 0.8);
    const reads = callsOf(runId, 'readApprovalTally').length;
    expect(await decide(runId, 'a@x.test', 'approved')).toBe(true);
    await tallyReads(runId, reads + 1);

    expect(await handle.result()).toBe('expired');
    const closedAt = callsOf(runId, 'closeApproval')[0].at;
    expect(closedAt - opened).toBeGreaterThanOrEqual(windowMs);
    // Before a window restarted at the reminder (or later, at the decision) could have closed: the
    // line between the two behaviours, not a bound on how fast this machine is.
    expect(closedAt - reminded).toBeLessThan(windowMs);
    expect(closed(runId)).toEqual([{ runId, outcome: 'expired', timedOut: true }]);
    expect(callsOf(runId, 'sendApprovalReminders')).toHaveLength(1);
  });

  it('a decision racing the deadline: each run does what its decision was told (accepted: approved and delivered once; refused: expired), recorded once', async () => {
    const windowMs = 1000;
    // The decision is made when the workflow wakes at the end of the window (its first tally read
    // after the deadline): before that read answers (-1), or that many ms after it started, racing
    // the workflow on to closeApproval. The dev server fires timers late by up to a second, so the
    // wake-up is the moment to aim at, not the nominal deadline. The later ones may come after the
    // close (refused, as a 409) or even after the run ended.
    const delaysMs = [-1, 0, 2, 5, 10, 20, 50, 100, 300];
    const runs = await Promise.all(delaysMs.map(() => startRun({ approvers: ['a@x.test'], timeoutMinutes: 1, onTimeout: 'reject', minuteMs: windowMs })));
    runs.forEach(({ runId }, i) => races.set(runId, { deadline: callsOf(runId, 'openApproval')[0].at + windowMs, delayMs: delaysMs[i] }));
    const results = await Promise.all(runs.map(({ handle }) => handle.result()));

    for (const [i, { runId }] of runs.entries()) {
      const race = races.get(runId)!;
      expect(race.accepted).toBeDefined(); // the decision was made at the first activity after the deadline
      const accepted = await race.accepted!;
      const outcome = results[i];
      const close = closed(runId);
      expect(close).toHaveLength(1);
      // What the approver was told is what the run did, whichever came first.
      const expected = accepted
        ? { delayMs: delaysMs[i], accepted, outcome: 'completed', closed: { runId, outcome: 'approved', timedOut: false }, deliveries: 1 }
        : { delayMs: delaysMs[i], accepted, outcome: 'expired', closed: { runId, outcome: 'expired', timedOut: true }, deliveries: 0 };
      expect({ delayMs: delaysMs[i], accepted, outcome, closed: close[0], deliveries: deliveriesOf(runId).length }).toEqual(expected);
      // The run's end is written once: by the workflow (expired), or by finishing its deliveries (approved).
      expect(finalUpdates(runId).length + callsOf(runId, 'finishFlowDeliveries').length).toBe(1);
      expect(callsOf(runId, 'finishFlowDeliveries')).toHaveLength(accepted ? 1 : 0);
    }
    // A decision recorded before the wake-up read answers is counted: approved, not timed out.
    expect(results[0]).toBe('completed');
    expect(closed(runs[0].runId)).toEqual([{ runId: runs[0].runId, outcome: 'approved', timedOut: false }]);
  });

  it('a close that answers nothing (the activity before it decided the outcome) leaves the outcome to the workflow\'s last tally', async () => {
    const windowMs = 1500;
    const approving = await startRun({ approvers: ['a@x.test'], timeoutMinutes: 1, onTimeout: 'reject', minuteMs: 60_000 });
    const expiring = await startRun({ approvers: ['a@x.test'], timeoutMinutes: 1, onTimeout: 'reject', minuteMs: windowMs });
    legacyCloses.add(approving.runId);
    legacyCloses.add(expiring.runId);

    await decide(approving.runId, 'a@x.test', 'approved');
    expect(await approving.handle.result()).toBe('completed');
    expect(deliveriesOf(approving.runId)).toHaveLength(1);
    expect(await expiring.handle.result()).toBe('expired');
    expect(finalUpdates(expiring.runId).map((c) => c.input)).toEqual([{ runId: expiring.runId, status: 'expired', approvalStatus: 'expired', finished: true }]);
  });
});
