import { startTestApp, type TestApp } from '../../support/app';
import { recordRunOutcome } from '../../../db/flow/gate-circuit';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';

const channel = { type: 'webhook', url: 'https://hooks.example.com/flow', secret: 'whsec_123456789' };

/** Per-gate rate limit, in process memory and shared through Redis. */
describe.each([
  ['memory', {}],
  ['redis', { REDIS_URL: 'redis://127.0.0.1:6379' }],
])('Flow per-gate rate limit (%s)', (_label, env) => {
  let app: TestApp;
  let ws: FlowWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ worker: false, env });
    ws = await flowWorkspace(app, 'scale');
  });
  afterAll(() => app.close());

  it('answers 429 ERR_FLOW_RUN_004 with retryAfter past maxSubmissionsPerMinute, per gate', async () => {
    const gate = await createGate(app, ws.key, { name: 'Limited', maxSubmissionsPerMinute: 3 });
    const other = await createGate(app, ws.key, { name: 'Other', maxSubmissionsPerMinute: 3 });
    for (let i = 0; i < 3; i += 1) expect((await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: {} })).status).toBe(200);
    const limited = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: {} });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, code: 'ERR_FLOW_RUN_004', retryAfter: expect.any(Number), relatedInfo: { limit: 3 } });
    expect(limited.body.retryAfter).toBeGreaterThan(0);
    expect(limited.body.retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('retry-after')).toBe(String(limited.body.retryAfter));
    expect((await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: {} } })).status).toBe(429);
    // Dry runs are not submissions; another gate has its own budget.
    expect((await app.request('POST', `/api/flow/gates/${gate.id}/test`, { token: ws.key, body: {} })).status).toBe(200);
    expect((await app.request('POST', `/api/flow/gates/${other.id}/validate`, { token: ws.key, body: {} })).status).toBe(200);
  });
});

describe('Flow circuit breaker', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  const db = () => app.services.db;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app, 'scale');
  });
  afterAll(() => app.close());

  const submit = (gateId: string, body: unknown = {}) => app.request('POST', `/api/flow/gates/${gateId}/validate`, { token: ws.key, body });
  const endCooldown = (gateId: string) => db().query(`UPDATE flow_gates SET circuit_open_until = now() - interval '1 second' WHERE id = $1`, [gateId]);

  it('opens after maxFailures consecutive failures, rejects with 503 until the cooldown, closes on a successful trial', async () => {
    const gate = await createGate(app, ws.key, { name: 'Breaker', deliveryChannels: [channel], maxFailures: 2, cooldownSeconds: 60, schema: { type: 'object', properties: { n: { type: 'integer' } } } });
    const runs = [];
    for (let i = 0; i < 3; i += 1) runs.push((await submit(gate.id)).body.runId);
    // Validation failures never count.
    expect((await submit(gate.id, { n: 'x' })).status).toBe(422);
    expect(await recordRunOutcome(db(), { runId: runs[0], outcome: 'failure' })).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
    // Reported twice (an activity retried): counted once.
    expect(await recordRunOutcome(db(), { runId: runs[0], outcome: 'failure' })).toBeNull();
    expect(await recordRunOutcome(db(), { runId: runs[1], outcome: 'failure' })).toMatchObject({ state: 'open', consecutiveFailures: 2, openUntil: expect.any(Date) });

    const open = await submit(gate.id);
    expect(open.status).toBe(503);
    expect(open.body).toMatchObject({ code: 'ERR_FLOW_RUN_003', retryAfter: expect.any(Number) });
    expect(open.body.retryAfter).toBeGreaterThan(50);
    expect((await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: {} } })).status).toBe(503);
    expect((await app.request('GET', `/api/flow/gates/${gate.id}`, { token: ws.key })).body.circuit.state).toBe('open');

    await endCooldown(gate.id);
    const trial = await submit(gate.id);
    expect(trial.status).toBe(200);
    // One trial at a time: the next submission waits for its outcome.
    expect((await submit(gate.id)).status).toBe(503);
    // A late success of a run admitted before the circuit opened does not close it; the trial's does.
    expect((await recordRunOutcome(db(), { runId: runs[2], outcome: 'success' }))?.state).toBe('half_open');
    expect(await recordRunOutcome(db(), { runId: trial.body.runId, outcome: 'success' })).toMatchObject({ state: 'closed', consecutiveFailures: 0, openUntil: null });
    expect((await submit(gate.id)).status).toBe(200);
  });

  it('re-opens when the trial fails; a trial that fails validation frees the slot', async () => {
    const gate = await createGate(app, ws.key, { name: 'Flaky', deliveryChannels: [channel], maxFailures: 1, schema: { type: 'object', properties: { n: { type: 'integer' } } } });
    const first = (await submit(gate.id)).body.runId;
    expect((await recordRunOutcome(db(), { runId: first, outcome: 'failure' }))?.state).toBe('open');
    await endCooldown(gate.id);
    const badTrial = await submit(gate.id, { n: 'x' });
    expect(badTrial.status).toBe(422);
    const trial = await submit(gate.id);
    expect(trial.status).toBe(200);
    expect(await recordRunOutcome(db(), { runId: trial.body.runId, outcome: 'failure' })).toMatchObject({ state: 'open' });
    expect((await submit(gate.id)).status).toBe(503);
  });

  it('never opens with circuitBreakerEnabled false, and turning it off resets an open circuit', async () => {
    const off = await createGate(app, ws.key, { name: 'No breaker', deliveryChannels: [channel], maxFailures: 1, circuitBreakerEnabled: false });
    const run = (await submit(off.id)).body.runId;
    expect(await recordRunOutcome(db(), { runId: run, outcome: 'failure' })).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
    expect((await submit(off.id)).status).toBe(200);

    const on = await createGate(app, ws.key, { name: 'Breaker on', deliveryChannels: [channel], maxFailures: 1 });
    await recordRunOutcome(db(), { runId: (await submit(on.id)).body.runId, outcome: 'failure' });
    expect((await submit(on.id)).status).toBe(503);
    const updated = await app.request('PUT', `/api/flow/gates/${on.id}`, { token: ws.key, body: { circuitBreakerEnabled: false } });
    expect(updated.body.circuit).toEqual({ state: 'closed', consecutiveFailures: 0, openUntil: null });
    expect((await submit(on.id)).status).toBe(200);
  });
});
