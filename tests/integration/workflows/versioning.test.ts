import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { workflowIds } from '../../../domain/temporal-names';
import { VERSIONING_BEHAVIOURS } from '../../../workflows/versioned';
import { waitFor } from '../../support/wait';
import { jobBookkeepingStubs } from './harness';

const Behavior = temporal.api.enums.v1.VersioningBehavior;

/**
 * Versioning per workflow type (docs/operations.md "Deploying new code"): a worker that polls as a
 * Worker Deployment version (the bundle workflows/versioned.ts, as worker/create-workers.ts loads it
 * when TEMPORAL_WORKER_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID are set) runs the long waiters
 * auto-upgrade and the short types pinned, whatever its default behaviour, on the run's real Temporal
 * dev server. Activities are stubs.
 */
describe('workflow versioning per type on a versioned worker', () => {
  const address = process.env.TEST_TEMPORAL_ADDRESS!;
  const deploymentName = `fw-versioning-${randomUUID().slice(0, 8)}`;
  const buildId = 'build-1';
  const taskQueue = `wf-test-versioning-${randomUUID()}`;
  let connection: Connection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    try {
      // The SDK narrates every worker state change at INFO (another test file's harness may have installed it already).
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed already
    }
    const bundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../../workflows/versioned'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
    });
    worker = await Worker.create({
      connection: await NativeConnection.connect({ address }),
      taskQueue,
      workflowBundle: bundle,
      // The default says pinned: the long waiters' own behaviour must win over it.
      workerDeploymentOptions: { version: { deploymentName, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' },
      activities: {
        ...jobBookkeepingStubs,
        // A batch of three documents, listed as the keyset query lists them.
        async listBatchJobs({ batchId, afterIndex, limit }: { batchId: string; afterIndex: number; limit: number }) {
          return [0, 1, 2].filter((i) => i > afterIndex).slice(0, limit).map((batchIndex) => ({ id: `${batchId}-${batchIndex}`, batchIndex }));
        },
        async renderJobs({ jobIds }: { jobIds: string[] }) {
          return jobIds.map((jobId) => ({ jobId, status: 'completed' }));
        },
        async completeBatch() {
          return [];
        },
        async attemptEventDeliveries({ deliveryIds }: { deliveryIds: string[] }) {
          return { delivered: deliveryIds.length, retrying: 0, failed: 0 };
        },
        async sendReviewDigest() {
          return { sent: 0, gateLive: false };
        },
        async sendAccountEmail() {
          return undefined;
        },
      },
    });
    running = worker.run();
    connection = await Connection.connect({ address });
    client = new Client({ connection });
    // The version exists once the worker polled; then it becomes the deployment's current version.
    await waitFor(
      async () => {
        try {
          await client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId, version: `${deploymentName}.${buildId}` });
          return true;
        } catch {
          return false;
        }
      },
      { what: 'the deployment version to be registered', timeoutMs: 30_000 },
    );
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
  });

  const behaviourOf = async (workflowId: string) => {
    const described = await client.workflow.getHandle(workflowId).describe();
    return described.raw.workflowExecutionInfo?.versioningInfo?.behavior;
  };

  it('names a behaviour for every registered type: the long waiters auto-upgrade, the rest are pinned', () => {
    expect(Object.entries(VERSIONING_BEHAVIOURS).filter(([, b]) => b === 'AUTO_UPGRADE').map(([name]) => name).sort()).toEqual([
      'deleteAccountWorkflow',
      'flowReviewDigestWorkflow',
      'flowRunWorkflow',
    ]);
  });

  it('a review digest runs auto-upgrade and an account e-mail pinned on the same versioned worker', async () => {
    const gateId = randomUUID();
    const digest = await client.workflow.start('flowReviewDigestWorkflow', { taskQueue, workflowId: workflowIds.reviewDigest(gateId), args: [{ gateId, digestMinutes: 1, minuteMs: 10 }] });
    const email = await client.workflow.start('sendAccountEmailWorkflow', { taskQueue, workflowId: `versioning-email-${randomUUID()}`, args: [{ email: 'a@x.test', purpose: 'reset_password' }] });
    await Promise.all([digest.result(), email.result()]);
    expect(await behaviourOf(digest.workflowId)).toBe(Behavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE);
    expect(await behaviourOf(email.workflowId)).toBe(Behavior.VERSIONING_BEHAVIOR_PINNED);
  });

  it('a pinned batch continues as new on a versioned worker, each run pinned to the version it started on', async () => {
    const batchId = randomUUID();
    const handle = await client.workflow.start('generateBatchWorkflow', {
      taskQueue,
      workflowId: batchId,
      args: [{ batchId, concurrency: 2, chunkSize: 2, renderTaskQueue: taskQueue, webhookRetryDelaysMs: [100] }],
    });
    await handle.result();
    // Three documents in chunks of two: the chain has two runs. The continue-as-new asks for auto-upgrade
    // of the next run's first task (workflows/shared/versioning.ts); this dev server (1.29.1) predates that
    // field and drops it, so what is shown here is that the chain runs and each run is pinned.
    const first = (await client.workflow.getHandle(batchId, handle.firstExecutionRunId).fetchHistory()).events ?? [];
    expect(first.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(true);
    expect((await client.workflow.getHandle(batchId).describe()).status.name).toBe('COMPLETED');
    expect(await behaviourOf(batchId)).toBe(Behavior.VERSIONING_BEHAVIOR_PINNED);
  });
});
