import { BATCH_TRANSITIONS, batchMachine } from '../../domain/documents/batch-status';
import { JOB_TRANSITIONS, jobMachine } from '../../domain/documents/job-status';
import { APPROVAL_TRANSITIONS, approvalMachine } from '../../domain/flow/approval-status';
import { RUN_TRANSITIONS, runMachine } from '../../domain/flow/run-status';
import { CANCELLABLE_RUN_STATUSES, REPORT_RUN_TRANSITIONS, reportRunMachine } from '../../domain/reporting/run-status';
import type { StateMachine } from '../../domain/state-machine';

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
    ]);
    expect(reportRunMachine.initial).toEqual(['queued', 'skipped']);
  });

  it('cannot cancel a delivering run or one that ended', () => {
    expect(CANCELLABLE_RUN_STATUSES).toEqual(['queued', 'running', 'rendering']);
    expect(reportRunMachine.canMove('delivering', 'cancelled')).toBe(false);
    expect(reportRunMachine.canMove('completed', 'failed')).toBe(false);
  });

  checkShape(reportRunMachine, REPORT_RUN_TRANSITIONS, ['completed', 'failed', 'cancelled', 'skipped']);
});
