import * as grpc from '@grpc/grpc-js';
import { connectTemporalClient } from '../../../platform/temporal';
import { loadConfig } from '../../../domain/config';

/**
 * Closing the Temporal client while the SDK waits to retry a call (a retryable status such as
 * UNAVAILABLE) must not end the process: the retry timer used to open a call on the closed channel and
 * throw "Channel has been shut down" outside any promise (seen as a test file failing after its last
 * test). The server here is a local gRPC server that answers every workflow start UNAVAILABLE.
 */
describe('closing the Temporal client', () => {
  const server = new grpc.Server();
  let port = 0;
  const starts: number[] = [];
  let firstStart!: () => void;
  const started = new Promise<void>((resolve) => (firstStart = resolve));

  beforeAll(async () => {
    const raw = (b: Buffer) => b;
    const service = 'temporal.api.workflowservice.v1.WorkflowService';
    server.register(`/${service}/GetSystemInfo`, (_call: unknown, answer: grpc.sendUnaryData<Buffer>) => answer(null, Buffer.alloc(0)), raw, raw, 'unary');
    server.register(
      `/${service}/StartWorkflowExecution`,
      (_call: unknown, answer: grpc.sendUnaryData<Buffer>) => {
        starts.push(Date.now());
        firstStart();
        answer({ code: grpc.status.UNAVAILABLE, details: 'try again later' });
      },
      raw,
      raw,
      'unary',
    );
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
  });
  afterAll(() => server.forceShutdown());

  it('lets the scheduled retry run before closing, and the pending call fails instead of the process', async () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
    const temporal = await connectTemporalClient(config.temporal);
    const start = temporal.client.workflow.start('someWorkflow', { taskQueue: 'q', workflowId: 'w-1' }).then(
      () => 'started',
      (err: Error) => err.message,
    );
    await started;
    // A call answered after the start's UNAVAILABLE on the same connection: once it is back, the client has
    // read that status and scheduled its retry.
    await temporal.client.connection.workflowService.getSystemInfo({});
    await temporal.close();
    // Without the fix, the retry timer fires on the closed channel: the start never settles and the
    // timer's "Channel has been shut down" is thrown outside any promise.
    expect(await start).toMatch(/./);
    expect(await start).not.toBe('started');
    expect(starts.length).toBeGreaterThanOrEqual(1);
  });
});
