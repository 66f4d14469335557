import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../../support/database';
import { waitFor } from '../../support/wait';

const DIST = join(__dirname, '..', '..', '..', 'dist');

/**
 * A TCP proxy to the run's Temporal frontend that the test can cut: once cut, every connection
 * (open or new) is closed at once, as when the frontend is unreachable, and each new one is counted.
 */
async function cuttableProxy(target: string) {
  const [host, port] = target.split(':');
  const sockets = new Set<Socket>();
  let cut = false;
  let refused = 0;
  const server: Server = createServer((client) => {
    if (cut) {
      refused += 1;
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  return {
    address: `127.0.0.1:${address.port}`,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A service process (createServices, as the API and the workers build it) whose outbox is starting a
 * workflow while Temporal cannot be reached, shut down (services.close) mid-retry: it must exit
 * cleanly. Before, the Temporal connection was closed under the start's pending gRPC retry, and the
 * client threw "Channel has been shut down" from that retry's timer, uncaught: the process crashed
 * (seen at the end of bench:validate, whose outbox still had a backlog). The record's mark stays for
 * the workers' sweep either way.
 */
describe('shutting down while the outbox retries a start against an unreachable Temporal', () => {
  it('waits for the start to settle before closing the connection, and exits cleanly', async () => {
    const temporalAddress = process.env.TEST_TEMPORAL_ADDRESS;
    if (!temporalAddress) throw new Error('TEST_TEMPORAL_ADDRESS is not set (tests/support/global-setup starts Temporal)');
    const proxy = await cuttableProxy(temporalAddress);
    const database = await createTestDatabase();
    const dataDir = await mkdtemp(join(tmpdir(), 'formwork-outbox-'));
    // The probe: build the services, start one workflow through the outbox once told Temporal is
    // gone, close the services once told the start is retrying, then stay alive for longer than the
    // client's longest retry interval (5 s, jittered by 20 %), the window in which the crash came.
    const probe = `
      const { loadConfig } = require(${JSON.stringify(join(DIST, 'domain', 'config.js'))});
      const { createLogger } = require(${JSON.stringify(join(DIST, 'domain', 'logger.js'))});
      const { createServices } = require(${JSON.stringify(join(DIST, 'platform', 'services.js'))});
      (async () => {
        const config = loadConfig();
        const services = await createServices(config, createLogger('error'));
        const lines = require('node:readline').createInterface({ input: process.stdin });
        const next = () => new Promise((resolve) => lines.once('line', resolve));
        console.log('ready');
        await next();
        services.outbox.start({ kind: 'documentJob', id: ${JSON.stringify(randomUUID())}, projectId: 'p-outbox-shutdown' });
        console.log('starting');
        await next();
        await services.close();
        console.log('closed');
        setTimeout(() => { console.log('still alive'); process.exit(0); }, 6500);
      })().catch((err) => { console.error(err); process.exit(2); });
    `;
    const child = spawn(process.execPath, ['-e', probe], {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        TEMPORAL_ADDRESS: proxy.address,
        TEMPORAL_TASK_QUEUE_PREFIX: `t-${randomBytes(4).toString('hex')}`,
        JWT_SECRET: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'error',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(async () => output.includes('ready') || child.exitCode !== null, { timeoutMs: 60_000, what: 'the services to start' });
      proxy.cut();
      child.stdin!.write('go\n');
      // The start failed against the cut proxy and the client is retrying it (a second refused connection).
      await waitFor(async () => output.includes('starting') && proxy.refused() >= 2, { timeoutMs: 30_000, what: 'the start to be retrying' });
      child.stdin!.write('close\n');
      const code = await exited;
      expect(output).not.toContain('Channel has been shut down');
      expect([code, output.trim().split('\n').slice(-2)]).toEqual([0, ['closed', 'still alive']]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await proxy.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
