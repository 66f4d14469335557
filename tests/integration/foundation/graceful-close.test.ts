import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { startTestApp } from '../../support/app';

/**
 * Stopping the service (api/server.ts `close`): requests in flight are answered, and a keep-alive
 * connection that was busy when the close began is closed once its answer is written, instead of
 * being held for the server's keep-alive timeout (15 minutes in tests: a close that waited for it
 * would time this test out).
 */
describe('closing the API server', () => {
  it('answers a request in flight and closes its keep-alive connection once the answer is written', async () => {
    const app = await startTestApp({ smtp: false, worker: false });
    const agent = new Agent({ keepAlive: true });
    const body = JSON.stringify({ email: 'nobody@example.com' });
    let sendRest = () => undefined as unknown;
    let socket: Socket | undefined;
    const answered = deferred<number>();
    // `Expect: 100-continue`: the server's "100 Continue" says it holds the request before the close begins.
    const headersTaken = new Promise<void>((resolve) => {
      const req = request(
        `${app.url}/api/auth/forgot-password`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' } },
        (res) => {
          res.resume();
          res.on('end', () => answered.resolve(res.statusCode ?? 0));
        },
      );
      req.on('socket', (s) => (socket = s));
      req.on('error', (err) => answered.reject(err));
      req.on('continue', () => resolve());
      sendRest = () => req.end(body);
      req.flushHeaders();
    });
    await headersTaken;
    const closing = app.close();
    sendRest();
    expect(await answered.promise).toBe(200);
    const socketClosed = new Promise<void>((resolve) => (socket!.destroyed ? resolve() : socket!.once('close', () => resolve())));
    await socketClosed;
    await closing;
    agent.destroy();
  });
});

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}
