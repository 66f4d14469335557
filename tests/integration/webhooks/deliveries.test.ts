import { createHmac, randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';
import { ended, sendTest, subscribe, waitForDelivery } from './helpers';

/** The spec's signature, computed here with node:crypto alone (not the service's signing module). */
function expectSigned(req: ReceivedRequest, secret: string): void {
  const ts = req.headers['x-service-timestamp'];
  expect(ts).toMatch(/^\d{10}$/);
  expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
  const expected = `v1=${createHmac('sha256', secret).update(`${ts}.${req.rawBody}`, 'utf8').digest('hex')}`;
  expect(req.headers['x-service-signature']).toBe(expected);
}

/** Document deliveries end to end: API → Temporal workflow → local receiver, with retries (contract §4, spec Events). */
describe('webhook deliveries', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    [app, receiver] = await Promise.all([
      startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } }),
      startWebhookReceiver(),
    ]);
    alice = await signUp(app, { verified: true });
  });
  afterAll(async () => {
    await receiver.stop();
    await app.close();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respondWith([]);
  });

  it('delivers the test event with the spec headers and a signature the receiver can verify', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/hooks/formwork` });
    const res = await app.request('POST', `/api/webhooks/${sub.id}/test`, { token: alice.accessToken });
    // The delivery record is created: 201 with Location at its GET URL.
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${app.url}/api/webhooks/deliveries/${res.body.deliveryId}`);
    expect(res.body).toMatchObject({ success: true, status: 'pending' });

    const [req] = await receiver.waitForRequests(1);
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks/formwork');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Formwork-Webhooks/1.0');
    expect(req.headers['x-service-event-id']).toBe(res.body.eventId);
    expect(req.headers['x-service-event-type']).toBe('webhook.test');
    expectSigned(req, sub.secret);
    // The envelope, with its fields in the spec's order.
    expect(Object.keys(req.json)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(req.json).toMatchObject({ id: res.body.eventId, type: 'webhook.test', data: { subscriptionId: sub.id } });
    expect(new Date(req.json.timestamp).toISOString()).toBe(req.json.timestamp);

    const delivery = await waitForDelivery(app, alice.accessToken, res.body.deliveryId, ended);
    expect(delivery).toMatchObject({ id: res.body.deliveryId, subscriptionId: sub.id, status: 'completed', eventType: 'webhook.test', nextAttemptAt: null });
    expect(delivery.attempts).toEqual([{ number: 1, at: expect.any(String), statusCode: 200, error: null, durationMs: expect.any(Number) }]);
    expect(delivery.completedAt).toEqual(expect.any(String));
    const list = await app.request('GET', `/api/webhooks/${sub.id}/deliveries`, { token: alice.accessToken });
    expect(list.body.data.map((d: any) => d.id)).toEqual([res.body.deliveryId]);
    expect(list.body.meta).toMatchObject({ total: 1 });
  });

  it('retries after a 500 and ends completed with both attempts recorded', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/flaky` });
    receiver.respondWith([{ status: 500, body: 'database is down' }, 200]);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const [first, second] = await receiver.waitForRequests(2);
    // The same event and body both times, each signed with its own timestamp.
    expect(second.rawBody).toBe(first.rawBody);
    expect(second.headers['x-service-event-id']).toBe(first.headers['x-service-event-id']);
    expectSigned(first, sub.secret);
    expectSigned(second, sub.secret);

    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('completed');
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ number: 1, statusCode: 500, error: 'HTTP 500: database is down' }),
      expect.objectContaining({ number: 2, statusCode: 200, error: null }),
    ]);
    expect(receiver.requests).toHaveLength(2);
  });

  it('does not retry a 4xx: one attempt, then failed', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/gone` });
    receiver.respondWith([410]);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toEqual([expect.objectContaining({ number: 1, statusCode: 410, error: 'HTTP 410: error 410' })]);
    expect(delivery.nextAttemptAt).toBeNull();
    expect(receiver.requests).toHaveLength(1);
  });

  it('gives up after 4 attempts (3 retries) of 5xx answers', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/down` });
    receiver.respondWith([], 503);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts.map((a: any) => [a.number, a.statusCode])).toEqual([[1, 503], [2, 503], [3, 503], [4, 503]]);
    // The waits grew with the schedule (200, 400, 800 ms here).
    const at = delivery.attempts.map((a: any) => Date.parse(a.at));
    expect(at[3] - at[0]).toBeGreaterThanOrEqual(1400);
    expect(receiver.requests).toHaveLength(4);
  });

  it('retries network errors: a stopped receiver, then the same receiver back', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/later` });
    await receiver.stop();
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const waiting = await waitForDelivery(app, alice.accessToken, deliveryId, (d) => d.attempts.length >= 1, 'first attempt');
    expect(waiting.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/^Network error: ECONNREFUSED/) });
    await receiver.start();
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('completed');
    expect(delivery.attempts.at(-1)).toMatchObject({ statusCode: 200, error: null });
    expect(receiver.requests).toHaveLength(1);
  });

  it('treats a connection reset as a network error and retries it', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/reset` });
    receiver.respondWith(['reset', 200]);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('completed');
    expect(delivery.attempts.map((a: any) => a.statusCode)).toEqual([null, 200]);
    expect(delivery.attempts[0].error).toMatch(/^Network error/);
  });

  it('refuses, at delivery time, a target that became a private address: one attempt, failed, nothing sent', async () => {
    // As if the allow-list shrank after the subscription was saved (or its DNS now answers privately).
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/private` });
    await app.services.db.query(`UPDATE webhook_subscriptions SET url = 'http://10.255.0.1:9/hook' WHERE id = $1`, [sub.id]);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toEqual([expect.objectContaining({ number: 1, statusCode: null, error: expect.stringMatching(/private or internal address/) })]);
    expect(receiver.requests).toHaveLength(0);
  });

  it('retries a failed delivery by hand, after which it is delivered; a completed one answers 409', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/manual` });
    receiver.respondWith([400], 200);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    await waitForDelivery(app, alice.accessToken, deliveryId, (d) => d.status === 'failed');

    const retry = await app.request('POST', `/api/webhooks/deliveries/${deliveryId}/retry`, { token: alice.accessToken });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ success: true, deliveryId });
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, (d) => d.status === 'completed');
    expect(delivery.attempts.map((a: any) => [a.number, a.statusCode])).toEqual([[1, 400], [2, 200]]);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1].headers['x-service-event-id']).toBe(receiver.requests[0].headers['x-service-event-id']);

    const again = await app.request('POST', `/api/webhooks/deliveries/${deliveryId}/retry`, { token: alice.accessToken });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ERR_WEBHOOK_003');
  });

  it('sends a retry to the URL the subscription has now', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/old-path` });
    receiver.respondWith([404]);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    await app.request('PATCH', `/api/webhooks/${sub.id}`, { token: alice.accessToken, body: { url: `${receiver.url}/new-path` } });
    expect((await app.request('POST', `/api/webhooks/deliveries/${deliveryId}/retry`, { token: alice.accessToken })).status).toBe(200);
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, (d) => d.status === 'completed');
    expect(delivery.url).toBe(`${receiver.url}/new-path`);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/old-path', '/new-path']);
  });

  it('answers a retry of a delivery still in its schedule with 409 ERR_WEBHOOK_005, and of unknown ids with 404', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/slow` });
    receiver.respondWith([], 500);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    const res = await app.request('POST', `/api/webhooks/deliveries/${deliveryId}/retry`, { token: alice.accessToken });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ERR_WEBHOOK_005');
    await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    for (const id of [randomUUID(), 'nope']) {
      const missing = await app.request('POST', `/api/webhooks/deliveries/${id}/retry`, { token: alice.accessToken });
      expect([missing.status, missing.body.code]).toEqual([404, 'ERR_WEBHOOK_002']);
    }
  });

  it('stops retrying when the subscription is switched off, and refuses tests and retries while it is off', async () => {
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/paused` });
    receiver.respondWith([], 500);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    await receiver.waitForRequests(1);
    await app.request('PATCH', `/api/webhooks/${sub.id}`, { token: alice.accessToken, body: { isActive: false } });
    const delivery = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts.at(-1)).toMatchObject({ statusCode: null, error: 'Subscription is inactive: not sent' });
    expect(receiver.requests.length).toBeLessThan(4);

    const test = await app.request('POST', `/api/webhooks/${sub.id}/test`, { token: alice.accessToken });
    expect([test.status, test.body.code]).toEqual([409, 'ERR_WEBHOOK_004']);
    const retry = await app.request('POST', `/api/webhooks/deliveries/${deliveryId}/retry`, { token: alice.accessToken });
    expect([retry.status, retry.body.code]).toEqual([409, 'ERR_WEBHOOK_004']);
  });

  it("keeps deliveries to their project: another project's delivery ids answer 404", async () => {
    const bob = await signUp(app, { verified: true });
    const sub = await subscribe(app, alice.accessToken, { url: `${receiver.url}/mine` });
    receiver.respondWith([422]);
    const deliveryId = await sendTest(app, alice.accessToken, sub.id);
    await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    for (const [method, path] of [['GET', `/api/webhooks/deliveries/${deliveryId}`], ['POST', `/api/webhooks/deliveries/${deliveryId}/retry`]]) {
      const res = await app.request(method, path, { token: bob.accessToken });
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'ERR_WEBHOOK_002']);
    }
    const still = await waitForDelivery(app, alice.accessToken, deliveryId, ended);
    expect(still.attempts).toHaveLength(1);
  });
});
