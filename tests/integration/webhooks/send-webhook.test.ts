import { createOutboundGuard, type Lookup } from '../../../adapters/http/outbound';
import { sendWebhook } from '../../../adapters/http/send-webhook';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/** One HTTP attempt and how its result is classified; no Temporal here, a local receiver only. */
describe('sendWebhook', () => {
  let receiver: WebhookReceiver;
  const lookup: Lookup = async (host) => {
    if (host === 'receiver.test') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
  const guard = createOutboundGuard(['127.0.0.1'], { maxRedirects: 0, lookup });
  const post = (url: string, timeoutMs?: number) => sendWebhook(guard, { url, body: '{"a":1}', headers: { 'Content-Type': 'application/json' } }, timeoutMs);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.stop());
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respondWith([]);
  });

  it('reports a 2xx as delivered with its status and duration', async () => {
    receiver.respondWith([204]);
    const result = await post(`${receiver.url}/ok`);
    expect(result).toEqual({ outcome: 'delivered', statusCode: 204, error: null, durationMs: expect.any(Number) });
    expect(receiver.requests[0]).toMatchObject({ method: 'POST', rawBody: '{"a":1}' });
  });

  it("keeps the start of a refusing receiver's answer in the error, and no more", async () => {
    receiver.respondWith([{ status: 422, body: `invalid   payload\n${'x'.repeat(5000)}` }]);
    const result = await post(`${receiver.url}/strict`);
    expect(result.outcome).toBe('permanent');
    expect(result.statusCode).toBe(422);
    expect(result.error).toMatch(/^HTTP 422: invalid payload x+$/);
    expect(result.error!.length).toBeLessThan(300);
  });

  it('times out a receiver that never answers, as a retryable failure', async () => {
    receiver.respondWith(['hang']);
    const result = await post(`${receiver.url}/slow`, 300);
    expect(result).toMatchObject({ outcome: 'retry', statusCode: null, error: 'Timed out after 0.3 s' });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
  });

  it('does not follow redirects: a moved endpoint is a permanent failure', async () => {
    receiver.respondWith([{ status: 308, headers: { location: `${receiver.url}/elsewhere` } }]);
    const result = await post(`${receiver.url}/moved`);
    expect(result).toMatchObject({ outcome: 'permanent', statusCode: null, error: expect.stringMatching(/Redirects are not followed/) });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/moved']);
  });

  it('retries a host that does not resolve (yet), refuses private addresses for good', async () => {
    expect(await post('http://nowhere.test/hook')).toMatchObject({ outcome: 'retry', statusCode: null, error: expect.stringMatching(/does not resolve/) });
    expect(await post('http://10.1.2.3/hook')).toMatchObject({ outcome: 'permanent', statusCode: null, error: expect.stringMatching(/private or internal/) });
    expect(await post('ftp://receiver.test/hook')).toMatchObject({ outcome: 'permanent', error: expect.stringMatching(/http or https/) });
    expect(receiver.requests).toHaveLength(0);
  });

  it('reports a refused connection as a retryable network error', async () => {
    const closed = await startWebhookReceiver();
    await closed.stop();
    expect(await post(`${closed.url}/x`)).toMatchObject({ outcome: 'retry', statusCode: null, error: 'Network error: ECONNREFUSED' });
  });
});
