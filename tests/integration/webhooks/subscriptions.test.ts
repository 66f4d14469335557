import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { apiKey, subscribe, teamWithMembers } from './helpers';

/** Contract §4: subscription management, who may do it, and what stays secret. */
describe('webhook subscriptions', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  const hook = 'http://127.0.0.1:9/hooks/formwork';

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } });
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
  });
  afterAll(() => app.close());

  it('creates a subscription and shows its signing secret only in the create response', async () => {
    const res = await app.request('POST', '/api/webhooks', {
      token: alice.accessToken,
      body: { url: hook, events: ['document.generated', 'batch.completed'], description: 'ERP sync' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ url: hook, events: ['document.generated', 'batch.completed'], description: 'ERP sync', isActive: true });
    expect(res.body.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const { id, secret } = res.body;

    const read = await app.request('GET', `/api/webhooks/${id}`, { token: alice.accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, url: hook, isActive: true });
    expect(read.body).not.toHaveProperty('secret');
    const list = await app.request('GET', '/api/webhooks', { token: alice.accessToken });
    expect(list.body.data.map((s: any) => s.id)).toContain(id);
    expect(list.text).not.toContain(secret);
    expect(list.body.meta).toMatchObject({ page: 1, limit: 20 });
  });

  it('updates url, events, description and isActive, and refuses unknown or empty patches', async () => {
    const { id } = await subscribe(app, alice.accessToken, { url: hook });
    const res = await app.request('PATCH', `/api/webhooks/${id}`, {
      token: alice.accessToken,
      body: { url: 'http://127.0.0.1:10/other', events: ['document.failed'], description: 'changed', isActive: false },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: 'http://127.0.0.1:10/other', events: ['document.failed'], description: 'changed', isActive: false });
    expect(res.body).not.toHaveProperty('secret');
    expect((await app.request('GET', `/api/webhooks/${id}`, { token: alice.accessToken })).body.isActive).toBe(false);

    for (const body of [{}, { secret: 'whsec_mine' }, { isActive: 'yes' }, { events: [] }]) {
      const bad = await app.request('PATCH', `/api/webhooks/${id}`, { token: alice.accessToken, body });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('ERR_VALID_001');
    }
  });

  it('deletes a subscription: 204, then 404 ERR_WEBHOOK_001 everywhere', async () => {
    const { id } = await subscribe(app, alice.accessToken, { url: hook });
    expect((await app.request('DELETE', `/api/webhooks/${id}`, { token: alice.accessToken })).status).toBe(204);
    for (const [method, path] of [['GET', `/api/webhooks/${id}`], ['PATCH', `/api/webhooks/${id}`], ['DELETE', `/api/webhooks/${id}`], ['GET', `/api/webhooks/${id}/deliveries`], ['POST', `/api/webhooks/${id}/test`]]) {
      const res = await app.request(method, path, { token: alice.accessToken, body: method === 'PATCH' ? { description: 'x' } : undefined });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'ERR_WEBHOOK_001']);
    }
    const list = await app.request('GET', '/api/webhooks', { token: alice.accessToken });
    expect(list.body.data.map((s: any) => s.id)).not.toContain(id);
  });

  it('validates the body: events from the document catalogue, an http(s) URL, no unknown fields', async () => {
    const cases: Array<Record<string, unknown>> = [
      { url: hook },
      { url: hook, events: ['flow.run.completed'] },
      { url: hook, events: ['document.generated', 'document.generated'] },
      { url: 'ftp://127.0.0.1/x', events: ['document.generated'] },
      { url: 'not a url', events: ['document.generated'] },
      { events: ['document.generated'] },
      { url: hook, events: ['document.generated'], secret: 'whsec_chosen' },
    ];
    for (const body of cases) {
      const res = await app.request('POST', '/api/webhooks', { token: alice.accessToken, body });
      // A missing url or events is ERR_VALID_005, anything else ERR_VALID_001 (docs/errors.md "Validation errors").
      expect([body, res.status, res.body.code]).toEqual([body, 400, 'url' in body && 'events' in body ? 'ERR_VALID_001' : 'ERR_VALID_005']);
    }
  });

  it('refuses private and internal addresses that OUTBOUND_ALLOWLIST does not open (400 ERR_OUTBOUND_001)', async () => {
    // Only 127.0.0.1 is allow-listed in this app.
    for (const url of ['http://10.0.0.7/hook', 'http://169.254.169.254/latest/meta-data', 'http://192.168.1.20:8080/', 'http://[::1]:8080/']) {
      const res = await app.request('POST', '/api/webhooks', { token: alice.accessToken, body: { url, events: ['document.generated'] } });
      expect([url, res.status, res.body.code]).toEqual([url, 400, 'ERR_OUTBOUND_001']);
    }
    const { id } = await subscribe(app, alice.accessToken, { url: hook });
    const patch = await app.request('PATCH', `/api/webhooks/${id}`, { token: alice.accessToken, body: { url: 'http://10.0.0.7/hook' } });
    expect(patch.status).toBe(400);
    expect(patch.body.code).toBe('ERR_OUTBOUND_001');
  });

  it('lets owners and admins manage subscriptions, refuses members and viewers with 403 ERR_AUTH_005', async () => {
    const [admin, member, viewer] = await Promise.all([signUp(app), signUp(app), signUp(app)]);
    const team = await teamWithMembers(app, alice, [
      { user: admin, role: 'admin' },
      { user: member, role: 'member' },
      { user: viewer, role: 'viewer' },
    ]);
    const inTeam = { 'X-Team-Id': team };
    const created = await subscribe(app, admin.accessToken, { url: hook }, inTeam);
    expect(created.teamId).toBe(team);
    expect((await app.request('GET', `/api/webhooks/${created.id}`, { token: alice.accessToken, headers: inTeam })).status).toBe(200);

    for (const user of [member, viewer]) {
      for (const [method, path, body] of [
        ['POST', '/api/webhooks', { url: hook, events: ['document.generated'] }],
        ['GET', '/api/webhooks', undefined],
        ['GET', `/api/webhooks/${created.id}`, undefined],
        ['DELETE', `/api/webhooks/${created.id}`, undefined],
      ] as const) {
        const res = await app.request(method, path, { token: user.accessToken, headers: inTeam, body });
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'admin' } });
      }
    }
  });

  it('takes API keys with manage_webhooks only; a key without it gets 403 ERR_AUTH_005', async () => {
    const without = await apiKey(app, alice, { generate_documents: true, read_documents: true, read_templates: true });
    const denied = await app.request('POST', '/api/webhooks', { token: without, body: { url: hook, events: ['document.generated'] } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'manage_webhooks' } });
    expect((await app.request('GET', '/api/webhooks', { token: without })).status).toBe(403);

    const withIt = await apiKey(app, alice, { manage_webhooks: true });
    const created = await subscribe(app, withIt, { url: hook });
    expect(created.secret).toMatch(/^whsec_/);
    // The key acts on the project it was made in: Alice sees the subscription with her JWT.
    expect((await app.request('GET', `/api/webhooks/${created.id}`, { token: alice.accessToken })).status).toBe(200);
    expect((await app.request('DELETE', `/api/webhooks/${created.id}`, { token: withIt })).status).toBe(204);
  });

  it('needs a credential (401 ERR_AUTH_003)', async () => {
    const res = await app.request('GET', '/api/webhooks');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('ERR_AUTH_003');
  });

  it("isolates projects: another project's subscription ids answer 404", async () => {
    const { id } = await subscribe(app, alice.accessToken, { url: hook });
    for (const [method, path] of [['GET', `/api/webhooks/${id}`], ['PATCH', `/api/webhooks/${id}`], ['DELETE', `/api/webhooks/${id}`], ['GET', `/api/webhooks/${id}/deliveries`], ['POST', `/api/webhooks/${id}/test`]]) {
      const res = await app.request(method, path, { token: bob.accessToken, body: method === 'PATCH' ? { isActive: false } : undefined });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'ERR_WEBHOOK_001']);
    }
    expect((await app.request('GET', '/api/webhooks', { token: bob.accessToken })).body.data.map((s: any) => s.id)).not.toContain(id);
    expect((await app.request('GET', `/api/webhooks/${id}`, { token: alice.accessToken })).body.isActive).toBe(true);
    expect((await app.request('GET', '/api/webhooks/not-a-uuid', { token: alice.accessToken })).status).toBe(404);
  });

  it('caps a project at 25 subscriptions (400 ERR_WEBHOOK_006)', async () => {
    const carol = await signUp(app);
    await Promise.all(Array.from({ length: 25 }, () => subscribe(app, carol.accessToken, { url: hook })));
    const res = await app.request('POST', '/api/webhooks', { token: carol.accessToken, body: { url: hook, events: ['document.failed'] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_WEBHOOK_006', relatedInfo: { limit: 25 } });
  });
});
