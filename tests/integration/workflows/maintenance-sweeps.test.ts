import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { MaintenanceInput, maintenanceWorkflow } from '../../../workflows/maintenance/maintenance.workflow';
import { startWorkflowHarness, type WorkflowHarness } from './harness';

/**
 * The maintenance workflow's shape with stubbed sweeps (the sweeps themselves are tested against
 * Postgres and Temporal in tests/integration/{documents,reporting,flow,idempotency}/): each domain's
 * sweep runs its steps in order, a retention step is called again while its batch comes back full,
 * and a sweep whose activity keeps failing (RETRY.maintenance: 3 attempts) stops only itself.
 */
describe('maintenanceWorkflow: the domains sweep independently (stubbed activities)', () => {
  let h: WorkflowHarness;
  /** Answers per activity, in call order; past the list a step answers 0. */
  const answers = new Map<string, number[]>();
  /** Activities that throw on every attempt. */
  const failing = new Set<string>();

  const step = (name: string) => async () => {
    if (failing.has(name)) throw new Error(`${name} cannot reach its store`);
    return answers.get(name)?.[h.log.count(name) - 1] ?? 0;
  };
  const SWEEP_STEPS = [
    'sweepWorkflowOutbox',
    'expireArtefacts',
    'restartStrandedDocuments',
    'expireFlowArtefacts',
    'restartStrandedAccounts',
    'expireReportOutputs',
    'expireReportDatasets',
    'deleteOldReportRuns',
    'restartStrandedReportRuns',
    'expireAgentTasks',
    'deleteExpiredIdempotencyKeys',
  ];

  beforeAll(async () => {
    h = await startWorkflowHarness('maintenance', {
      ...Object.fromEntries(SWEEP_STEPS.map((name) => [name, step(name)])),
      async reconcileReportSchedules() {
        if (failing.has('reconcileReportSchedules')) throw new Error('Temporal schedules unreachable');
        return { created: 1, updated: 2, deleted: 0 };
      },
    });
  });
  afterAll(() => h?.close());
  beforeEach(() => {
    h.log.calls.length = 0;
    answers.clear();
    failing.clear();
  });

  const input: MaintenanceInput = {
    retentionSeconds: 3600,
    strandedAfterSeconds: 60,
    deletionGraceSeconds: 302,
    reportArtefactRetentionDays: 30,
    reportRunRetentionDays: 90,
    reportAgentQueueTimeoutSeconds: 600,
  };
  const run = () => h.client.workflow.execute<typeof maintenanceWorkflow>('maintenanceWorkflow', { taskQueue: h.taskQueue, workflowId: `maintenance-${randomUUID()}`, args: [input] });
  const stepsCalled = () => [...new Set(h.log.calls.map((c) => c.name))].sort();

  it('runs every sweep, drains full batches of 500, and adds up what they expired and restarted', async () => {
    answers.set('expireArtefacts', [500, 500, 7]);
    answers.set('deleteExpiredIdempotencyKeys', [500, 3]);
    answers.set('expireFlowArtefacts', [2]);
    answers.set('sweepWorkflowOutbox', [1]);
    answers.set('restartStrandedDocuments', [4]);
    answers.set('restartStrandedAccounts', [5]);
    answers.set('expireAgentTasks', [6]);

    // Expired: 1007 document files, 2 Flow files, 6 agent tasks (keys uncounted); restarted: 1 + 4 + 5 + 3 reconciled schedules.
    expect(await run()).toEqual({ expired: 1015, restarted: 13 });
    expect(h.log.count('expireArtefacts')).toBe(3);
    expect(h.log.count('deleteExpiredIdempotencyKeys')).toBe(2);
    expect(h.log.inputsOf('expireArtefacts')[0]).toEqual({ olderThanSeconds: 3600, limit: 500 });
    expect(h.log.inputsOf('restartStrandedAccounts')).toEqual([{ olderThanSeconds: 60, deletionGraceSeconds: 302 }]);
    expect(h.log.inputsOf('expireReportDatasets')).toEqual([{ olderThanDays: 30, limit: 500 }]);
    expect(h.log.inputsOf('expireAgentTasks')).toEqual([{ queueTimeoutSeconds: 600, runRetentionDays: 90, limit: 500 }]);
    expect(stepsCalled()).toEqual([...SWEEP_STEPS, 'reconcileReportSchedules'].sort());
    // Reporting's steps keep their order: files, runs, restarts, schedules, agent tasks.
    const reporting = h.log.calls.map((c) => c.name).filter((n) => /Report|AgentTasks/.test(n));
    expect(reporting).toEqual(['expireReportOutputs', 'expireReportDatasets', 'deleteOldReportRuns', 'restartStrandedReportRuns', 'reconcileReportSchedules', 'expireAgentTasks']);
  });

  it('a sweep whose activity keeps failing is tried 3 times and stops itself alone; the run then fails naming it', async () => {
    failing.add('expireFlowArtefacts');
    failing.add('reconcileReportSchedules');
    answers.set('expireArtefacts', [500, 1]);

    const failure = await run().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause?.message).toBe(
      'Maintenance sweeps failed: flow (expireFlowArtefacts cannot reach its store); reporting (Temporal schedules unreachable)',
    );
    // RETRY.maintenance: three attempts each.
    expect(h.log.count('expireFlowArtefacts')).toBe(3);
    expect(h.log.count('reconcileReportSchedules')).toBe(3);
    // Every other sweep ran to its end, reporting up to its failed step.
    expect(h.log.count('expireArtefacts')).toBe(2);
    for (const name of ['sweepWorkflowOutbox', 'restartStrandedDocuments', 'restartStrandedAccounts', 'restartStrandedReportRuns', 'deleteExpiredIdempotencyKeys']) {
      expect({ name, calls: h.log.count(name) }).toEqual({ name, calls: 1 });
    }
    expect(h.log.count('expireAgentTasks')).toBe(0);
  });
});
