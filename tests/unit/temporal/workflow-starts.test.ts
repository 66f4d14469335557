import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { taskQueues, workflowIds } from '../../../domain/temporal-names';
import type { WorkflowOutboxDeps } from '../../../platform/workflow-outbox';
import { startWorkflow } from '../../../platform/start-workflow';
import {
  flowRunWorkflowInput,
  startAccountDeletion,
  startAccountEmail,
  startDocumentBatch,
  startDocumentJob,
  startFlowRun,
  startInvitationEmail,
  startWebhookDelivery,
  type WorkflowStartDeps,
} from '../../../platform/workflow-starts';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../../../workflows/shared/search-attributes';

interface Started {
  type: string;
  taskQueue: string;
  workflowId: string;
  args: unknown[];
  attributes: { kind?: string; entityId?: string; projectId?: string };
  workflowIdReusePolicy?: string;
  /** Signal-with-start: the signal and its arguments. */
  signal?: { name: string; args: unknown[] };
}

/** A Temporal client that only records what would have been started. */
function fakeClient(): { client: Client; started: Started[] } {
  const started: Started[] = [];
  type Options = { taskQueue: string; workflowId: string; args: unknown[]; typedSearchAttributes: TypedSearchAttributes; workflowIdReusePolicy?: string; signal?: string; signalArgs?: unknown[] };
  const record = async (type: string, o: Options) => {
    const sa = o.typedSearchAttributes;
    started.push({
      type,
      taskQueue: o.taskQueue,
      workflowId: o.workflowId,
      args: o.args,
      attributes: { kind: sa.get(SA_KIND), entityId: sa.get(SA_ENTITY_ID), projectId: sa.get(SA_PROJECT_ID) },
      ...(o.workflowIdReusePolicy ? { workflowIdReusePolicy: o.workflowIdReusePolicy } : {}),
      ...(o.signal ? { signal: { name: o.signal, args: o.signalArgs ?? [] } } : {}),
    });
    return {};
  };
  const client = { workflow: { start: record, signalWithStart: record } } as unknown as Client;
  return { client, started };
}

function depsWith(client: Client): WorkflowStartDeps {
  return {
    temporal: client,
    taskQueues: taskQueues('fw'),
    config: { webhooks: { retryDelaysMs: [100, 200, 300] }, documents: { batchConcurrency: 4, batchChunkSize: 50 } },
  };
}

describe('workflow launchers (platform/workflow-starts.ts)', () => {
  it('a document job and a batch get the render queue and the webhook retry delays in their input, ids from workflowIds, started once per id (REJECT_DUPLICATE)', async () => {
    const { client, started } = fakeClient();
    await startDocumentJob(depsWith(client), { id: 'job-1', projectId: 'p1' });
    await startDocumentBatch(depsWith(client), { id: 'batch-1', projectId: 'p1' });
    expect(started).toEqual([
      {
        type: 'generateDocumentWorkflow',
        taskQueue: 'fw-main',
        workflowId: workflowIds.documentJob('job-1'),
        args: [{ jobId: 'job-1', renderTaskQueue: 'fw-render', webhookRetryDelaysMs: [100, 200, 300] }],
        attributes: { kind: 'document', entityId: 'job-1', projectId: 'p1' },
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      },
      {
        type: 'generateBatchWorkflow',
        taskQueue: 'fw-main',
        workflowId: workflowIds.documentBatch('batch-1'),
        args: [{ batchId: 'batch-1', concurrency: 4, chunkSize: 50, renderTaskQueue: 'fw-render', webhookRetryDelaysMs: [100, 200, 300] }],
        attributes: { kind: 'batch', entityId: 'batch-1', projectId: 'p1' },
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      },
    ]);
  });

  it('a Flow run is started once per run id (REJECT_DUPLICATE) with its render queue and retry delays', async () => {
    const { client, started } = fakeClient();
    const deps = depsWith(client);
    await startFlowRun({ temporal: client, taskQueue: deps.taskQueues.main }, { id: 'run-1', projectId: 'p1' }, flowRunWorkflowInput(deps));
    expect(started).toEqual([
      {
        type: 'flowRunWorkflow',
        taskQueue: 'fw-main',
        workflowId: workflowIds.flowRun('run-1'),
        args: [{ runId: 'run-1', retryDelaysMs: [100, 200, 300], renderTaskQueue: 'fw-render' }],
        attributes: { kind: 'flow-run', entityId: 'run-1', projectId: 'p1' },
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      },
    ]);
  });

  it('account e-mails: a fresh id each, the sign-up one per user; a reset by address is findable by its own id', async () => {
    const { client, started } = fakeClient();
    const deps = depsWith(client);
    await startAccountEmail(deps, { userId: 'u1', purpose: 'verify_email' }, workflowIds.signupEmail('u1'));
    await startAccountEmail(deps, { userId: 'u1', purpose: 'sign_in_locked', lockedStep: 'password', lockSeconds: 60 });
    await startAccountEmail(deps, { email: 'a@x.test', purpose: 'reset_password' });
    expect(started.map((s) => [s.type, s.workflowId.startsWith('account-email-'), s.attributes.kind])).toEqual([
      ['sendAccountEmailWorkflow', true, 'account-email:verify_email'],
      ['sendAccountEmailWorkflow', true, 'account-email:sign_in_locked'],
      ['sendAccountEmailWorkflow', true, 'account-email:reset_password'],
    ]);
    expect(started[0].workflowId).toBe(workflowIds.signupEmail('u1'));
    expect(started[0].attributes.entityId).toBe('u1');
    expect(started[1].workflowId).not.toBe(started[0].workflowId);
    const reset = started[2];
    expect(reset.args).toEqual([{ email: 'a@x.test', purpose: 'reset_password' }]);
    expect(reset.workflowId).toBe(workflowIds.accountEmail(reset.attributes.entityId!));
  });

  it('deletion, invitation and a webhook delivery: ids from workflowIds, inputs as given', async () => {
    const { client, started } = fakeClient();
    const deps = depsWith(client);
    await startAccountDeletion(deps, { userId: 'u1', graceSeconds: 30, requestToken: '20261128T120000.000001' }, new Date('2026-11-28T12:00:30.000Z'));
    await startInvitationEmail(deps, { id: 'inv-1', projectId: 'p1' });
    await startWebhookDelivery(deps, { projectId: 'p1', workflowId: workflowIds.webhookDeliveryRetry('d1', 2), input: { deliveryId: 'd1', retryDelaysMs: [1] } });
    // The deletion request goes with signal-with-start: a run of an older request takes it over.
    expect(started[0].signal).toEqual({ name: 'deletionRequested', args: [{ requestToken: '20261128T120000.000001', purgeAt: '2026-11-28T12:00:30.000Z' }] });
    expect(started.map(({ type, workflowId, args, attributes }) => ({ type, workflowId, args, attributes }))).toEqual([
      {
        type: 'deleteAccountWorkflow',
        workflowId: 'account-deletion-u1',
        args: [{ userId: 'u1', graceSeconds: 30, requestToken: '20261128T120000.000001' }],
        attributes: { kind: 'account-deletion', entityId: 'u1' },
      },
      { type: 'sendInvitationEmailWorkflow', workflowId: 'team-invitation-inv-1', args: [{ invitationId: 'inv-1' }], attributes: { kind: 'team-invitation', entityId: 'inv-1', projectId: 'p1' } },
      {
        type: 'deliverWebhookWorkflow',
        workflowId: 'webhook-delivery-d1-retry-2',
        args: [{ deliveryId: 'd1', retryDelaysMs: [1] }],
        attributes: { kind: 'webhook-delivery', entityId: 'd1', projectId: 'p1' },
      },
    ]);
  });

  it('a start that leaves out config its workflow needs does not compile (tsc checks the lines below; npm test type-checks first)', () => {
    const { client } = fakeClient();
    const deps = depsWith(client);
    const neverRun = () => [
      // @ts-expect-error a Flow run without its render task queue
      startWorkflow(client, 'flowRunWorkflow', { taskQueue: 'q', workflowId: 'r', args: [{ runId: 'r', retryDelaysMs: [] }], kind: 'flow-run', entityId: 'r' }),
      // @ts-expect-error the launcher's config without the render task queue
      startFlowRun({ temporal: client, taskQueue: 'q' }, { id: 'r', projectId: 'p' }, { retryDelaysMs: [] }),
      // @ts-expect-error a name no worker registers
      startWorkflow(client, 'noSuchWorkflow', { taskQueue: 'q', workflowId: 'x', args: [], kind: 'x', entityId: 'x' }),
      // @ts-expect-error arguments of the wrong workflow
      startWorkflow(client, 'generateDocumentWorkflow', { taskQueue: 'q', workflowId: 'j', args: [{ invitationId: 'i' }], kind: 'document', entityId: 'j' }),
      startWorkflow(client, 'flowRunWorkflow', { taskQueue: 'q', workflowId: 'r', args: [{ runId: 'r', ...flowRunWorkflowInput(deps) }], kind: 'flow-run', entityId: 'r' }),
    ];
    // The outbox (API and worker sweep) cannot be built without the workflows' config either.
    // @ts-expect-error config is required
    const outboxDeps: WorkflowOutboxDeps = { db: undefined as never, temporal: client, taskQueues: taskQueues('q'), logger: undefined as never };
    expect([typeof neverRun, outboxDeps.taskQueues.main]).toEqual(['function', 'q-main']);
  });
});
