import { BATCH_TRANSITIONS, batchMachine } from '../../domain/documents/batch-status';
import { JOB_TRANSITIONS, jobMachine } from '../../domain/documents/job-status';
import { APPROVAL_TRANSITIONS, approvalMachine } from '../../domain/flow/approval-status';
import { RUN_TRANSITIONS, runMachine } from '../../domain/flow/run-status';
import { AGENT_TASK_TRANSITIONS, agentTaskMachine } from '../../domain/reporting/agent-task-status';
import { DELIVERY_TRANSITIONS, deliveryMachine } from '../../domain/deliveries/delivery-status';
import { JOB_RUN_TRANSITIONS, jobRunMachine } from '../../domain/reporting/job-run-status';
import { CANCELLABLE_RUN_STATUSES, REPORT_RUN_TRANSITIONS, reportRunMachine } from '../../domain/reporting/run-status';
import { defineStateMachine, type StateMachine } from '../../domain/state-machine';

/** Every move the table allows, as `from → to`. */
function moves<S extends string>(m: StateMachine<S>): string[] {
  return m.statuses.flatMap((from) => m.statuses.filter((to) => m.canMove(from, to)).map((to) => `${from} → ${to}`));
}

function reachableFromInitial<S extends string>(m: StateMachine<S>): Set<S> {
  const seen = new Set<S>(m.initial);
  const queue = [...m.initial];
  while (queue.length > 0) {
    for (const to of m.transitions[queue.shift()!]) {
      if (!seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return seen;
}

/** What every table must satisfy besides its own moves. */
function checkShape<S extends string>(m: StateMachine<S>, table: Readonly<Record<S, readonly S[]>>, terminal: S[]): void {
  it('answers canMove from the table, for every pair of statuses', () => {
    for (const from of m.statuses) for (const to of m.statuses) expect(m.canMove(from, to)).toBe(table[from].includes(to));
  });

  it('ends only in its terminal statuses, which have no way out', () => {
    expect([...m.terminal].sort()).toEqual([...terminal].sort());
    for (const t of terminal) {
      expect(m.isTerminal(t)).toBe(true);
      for (const to of m.statuses) expect(m.canMove(t, to)).toBe(false);
      expect(m.transitions[t]).toEqual([]);
    }
  });

  it('reaches every status from a status a row is created in', () => {
    expect([...reachableFromInitial(m)].sort()).toEqual([...m.statuses].sort());
  });

  it("gives each target the statuses that may move to it (the owner's WHERE status = ANY)", () => {
    for (const to of m.statuses) {
      expect(m.sourcesOf(to)).toEqual(m.statuses.filter((from) => m.transitions[from].includes(to)));
    }
  });

  it('lists only its own statuses', () => {
    for (const s of m.statuses) for (const to of m.transitions[s]) expect(m.statuses).toContain(to);
    for (const s of m.initial) expect(m.statuses).toContain(s);
  });
}

describe('Flow run statuses (flow_runs.status)', () => {
  it('allows exactly the moves of the run lifecycle', () => {
    expect(moves(runMachine)).toEqual([
      'validated → rendering',
      'validated → review_required',
      'validated → delivering',
      'validated → completed',
      'rendering → review_required',
      'rendering → delivering',
      'rendering → completed',
      'rendering → failed',
      'review_required → approved',
      'review_required → rejected',
      'review_required → expired',
      'approved → delivering',
      'approved → completed',
      'delivering → completed',
      'delivering → failed',
      'failed → completed',
    ]);
    expect(runMachine.initial).toEqual(['validation_failed', 'validated', 'completed']);
  });

  it('refuses moves the lifecycle does not have', () => {
    expect(runMachine.canMove('validated', 'approved')).toBe(false); // approval needs review first
    expect(runMachine.canMove('review_required', 'delivering')).toBe(false);
    expect(runMachine.canMove('rejected', 'approved')).toBe(false);
    expect(runMachine.canMove('completed', 'failed')).toBe(false);
    expect(runMachine.canMove('failed', 'delivering')).toBe(false);
    expect(runMachine.canMove('validated', 'validated')).toBe(false);
  });

  it('narrows a move to some of its sources, and refuses a narrowing the table does not allow', () => {
    expect(runMachine.sourcesOf('completed', ['failed'])).toEqual(['failed']);
    expect(runMachine.sourcesOf('review_required')).toEqual(['validated', 'rendering']);
    expect(() => runMachine.sourcesOf('completed', ['rejected'])).toThrow('no move from rejected to completed');
  });

  checkShape(runMachine, RUN_TRANSITIONS, ['validation_failed', 'rejected', 'expired', 'completed']);
});

describe('Flow approval statuses (flow_approvals.status)', () => {
  it('opens pending and is decided once', () => {
    expect(moves(approvalMachine)).toEqual(['pending → approved', 'pending → rejected', 'pending → expired']);
    expect(approvalMachine.initial).toEqual(['pending']);
  });

  it('refuses taking a decision back', () => {
    expect(approvalMachine.canMove('approved', 'rejected')).toBe(false);
    expect(approvalMachine.canMove('rejected', 'pending')).toBe(false);
    expect(approvalMachine.canMove('expired', 'approved')).toBe(false);
  });

  checkShape(approvalMachine, APPROVAL_TRANSITIONS, ['approved', 'rejected', 'expired']);
});

describe('Document job statuses (document_jobs.status)', () => {
  it('queues, claims (again on a retried render) and ends once', () => {
    expect(moves(jobMachine)).toEqual([
      'queued → processing',
      'queued → failed',
      'queued → cancelled',
      'processing → processing',
      'processing → completed',
      'processing → failed',
      'processing → cancelled',
    ]);
    expect(jobMachine.initial).toEqual(['queued']);
    expect(jobMachine.sourcesOf('processing')).toEqual(['queued', 'processing']);
    expect(jobMachine.sourcesOf('cancelled')).toEqual(['queued', 'processing']);
  });

  it('refuses moves out of an ended job and completing an unclaimed one', () => {
    expect(jobMachine.canMove('queued', 'completed')).toBe(false);
    expect(jobMachine.canMove('failed', 'queued')).toBe(false); // a retry is a new job
    expect(jobMachine.canMove('cancelled', 'processing')).toBe(false);
    expect(jobMachine.canMove('completed', 'failed')).toBe(false);
  });

  checkShape(jobMachine, JOB_TRANSITIONS, ['completed', 'failed', 'cancelled']);
});

describe('Document batch statuses (document_batches.status)', () => {
  it('processes, then completes once', () => {
    expect(moves(batchMachine)).toEqual(['processing → completed']);
    expect(batchMachine.initial).toEqual(['processing']);
    expect(batchMachine.canMove('completed', 'processing')).toBe(false);
  });

  checkShape(batchMachine, BATCH_TRANSITIONS, ['completed']);
});

describe('the machine helper (domain/state-machine.ts)', () => {
  it('counts the terminal statuses as ended, and those named `ended` too', () => {
    const m = defineStateMachine(['open', 'failed', 'done'] as const, ['open'], { open: ['failed', 'done'], failed: ['done'], done: [] }, { ended: ['failed'] });
    expect(m.terminal).toEqual(['done']);
    expect(m.ended).toEqual(['failed', 'done']);
    expect(m.isEnded('failed')).toBe(true);
    expect(m.isTerminal('failed')).toBe(false);
    expect(m.isEnded('open')).toBe(false);
    expect(defineStateMachine(['a', 'b'] as const, ['a'], { a: ['b'], b: [] }).ended).toEqual(['b']);
  });
});

describe('Report run statuses (reporting_runs.status)', () => {
  it('queues, runs the queries, renders, delivers and ends once (docs/reporting.md "Statuses")', () => {
    expect(moves(reportRunMachine)).toEqual([
      'queued → running',
      'queued → failed',
      'queued → cancelled',
      'running → rendering',
      'running → failed',
      'running → cancelled',
      'running → skipped',
      'rendering → delivering',
      'rendering → completed',
      'rendering → failed',
      'rendering → cancelled',
      'delivering → completed',
      'delivering → failed',
      'failed → completed',
    ]);
    expect(reportRunMachine.initial).toEqual(['queued', 'skipped']);
  });

  it('leaves `failed` only for `completed` (its failed deliveries delivered on a manual retry), and counts it an end', () => {
    expect(reportRunMachine.transitions.failed).toEqual(['completed']);
    expect(reportRunMachine.sourcesOf('completed', ['failed'])).toEqual(['failed']);
    expect(reportRunMachine.sourcesOf('completed', ['delivering'])).toEqual(['delivering']);
    expect(reportRunMachine.canMove('failed', 'delivering')).toBe(false);
    expect(reportRunMachine.canMove('failed', 'running')).toBe(false);
    expect(reportRunMachine.canMove('cancelled', 'completed')).toBe(false);
    expect(reportRunMachine.ended).toEqual(['completed', 'failed', 'cancelled', 'skipped']);
  });

  it('cannot cancel a delivering run or one that ended', () => {
    expect(CANCELLABLE_RUN_STATUSES).toEqual(['queued', 'running', 'rendering']);
    expect(reportRunMachine.canMove('delivering', 'cancelled')).toBe(false);
    expect(reportRunMachine.canMove('completed', 'failed')).toBe(false);
  });

  checkShape(reportRunMachine, REPORT_RUN_TRANSITIONS, ['completed', 'cancelled', 'skipped']);
});

describe('Report job run statuses (reporting_job_runs.status)', () => {
  it('queues, runs its reports, delivers the bundle and ends once', () => {
    expect(moves(jobRunMachine)).toEqual([
      'queued → running',
      'queued → failed',
      'queued → cancelled',
      'running → delivering',
      'running → completed',
      'running → failed',
      'running → cancelled',
      'delivering → completed',
      'delivering → failed',
      'failed → completed',
    ]);
    expect(jobRunMachine.initial).toEqual(['queued', 'skipped']);
  });

  it('cannot cancel a delivering job run, and leaves `failed` only for `completed`', () => {
    expect(jobRunMachine.sourcesOf('cancelled')).toEqual(['queued', 'running']);
    expect(jobRunMachine.transitions.failed).toEqual(['completed']);
    expect(jobRunMachine.canMove('completed', 'failed')).toBe(false);
    expect(jobRunMachine.canMove('skipped', 'running')).toBe(false);
    expect(jobRunMachine.ended).toEqual(['completed', 'failed', 'cancelled', 'skipped']);
  });

  checkShape(jobRunMachine, JOB_RUN_TRANSITIONS, ['completed', 'cancelled', 'skipped']);
});

describe('Delivery statuses (reporting_deliveries.status, webhook_deliveries.status)', () => {
  it('is created pending (or skipped), attempted, and reopened by a manual retry', () => {
    expect(moves(deliveryMachine)).toEqual([
      'pending → delivering',
      'pending → failed',
      'delivering → delivering',
      'delivering → completed',
      'delivering → failed',
      'failed → pending',
      'failed → delivering',
      'failed → completed',
      'failed → failed',
      'skipped → pending',
    ]);
    expect(deliveryMachine.initial).toEqual(['pending', 'skipped']);
  });

  it("gives the owner's UPDATEs the statuses they moved from before the table", () => {
    expect(deliveryMachine.sourcesOf('pending')).toEqual(['failed', 'skipped']); // manual retry
    expect(deliveryMachine.sourcesOf('delivering')).toEqual(['pending', 'delivering', 'failed']); // a webhook attempt: any but completed
    expect(deliveryMachine.sourcesOf('delivering', ['pending', 'delivering'])).toEqual(['pending', 'delivering']); // a report attempt
    expect(deliveryMachine.sourcesOf('failed', ['pending', 'delivering'])).toEqual(['pending', 'delivering']); // abandoned
    expect(deliveryMachine.sourcesOf('failed', ['pending'])).toEqual(['pending']); // retry not started
    // An attempt's record: from anything but completed (skipped deliveries are not attempted).
    expect(deliveryMachine.sourcesOf('completed')).toEqual(['delivering', 'failed']);
    expect(deliveryMachine.sourcesOf('failed')).toEqual(['pending', 'delivering', 'failed']);
  });

  it('never moves a completed delivery, and never sends a skipped one without a retry', () => {
    for (const to of deliveryMachine.statuses) expect(deliveryMachine.canMove('completed', to)).toBe(false);
    expect(deliveryMachine.canMove('skipped', 'delivering')).toBe(false);
    expect(deliveryMachine.canMove('pending', 'completed')).toBe(false);
    expect(deliveryMachine.canMove('delivering', 'pending')).toBe(false);
    expect(() => deliveryMachine.sourcesOf('pending', ['completed'])).toThrow('no move from completed to pending');
    expect(() => deliveryMachine.sourcesOf('pending', ['delivering'])).toThrow('no move from delivering to pending');
  });

  checkShape(deliveryMachine, DELIVERY_TRANSITIONS, ['completed']);
});

describe('Agent task statuses (reporting_agent_tasks.status)', () => {
  it('is queued, leased by a session, answered, cancelled or expired', () => {
    expect(moves(agentTaskMachine)).toEqual([
      'queued → leased',
      'queued → failed',
      'queued → cancelled',
      'queued → expired',
      'leased → completed',
      'leased → failed',
      'leased → cancel_requested',
      'leased → expired',
      'completed → expired',
      'failed → expired',
      'cancel_requested → completed',
      'cancel_requested → failed',
      'cancel_requested → cancelled',
      'cancel_requested → expired',
    ]);
    expect(agentTaskMachine.initial).toEqual(['queued']);
    expect(agentTaskMachine.ended).toEqual(['completed', 'failed', 'cancelled', 'expired']);
  });

  it("gives the owner's UPDATEs the statuses they moved from before the table", () => {
    expect(agentTaskMachine.sourcesOf('leased')).toEqual(['queued']);
    expect(agentTaskMachine.sourcesOf('cancelled', ['cancel_requested'])).toEqual(['cancel_requested']); // the agent's answer
    expect(agentTaskMachine.sourcesOf('completed')).toEqual(['leased', 'cancel_requested']);
    expect(agentTaskMachine.sourcesOf('expired', ['queued', 'leased', 'cancel_requested'])).toEqual(['queued', 'leased', 'cancel_requested']);
  });

  it('refuses answering a task nobody leased, and reopening one', () => {
    expect(agentTaskMachine.canMove('queued', 'completed')).toBe(false);
    expect(agentTaskMachine.canMove('leased', 'cancelled')).toBe(false); // the agent is asked first
    expect(agentTaskMachine.canMove('expired', 'completed')).toBe(false);
    expect(agentTaskMachine.canMove('completed', 'leased')).toBe(false);
    expect(agentTaskMachine.canMove('cancelled', 'expired')).toBe(false);
  });

  checkShape(agentTaskMachine, AGENT_TASK_TRANSITIONS, ['cancelled', 'expired']);
});
