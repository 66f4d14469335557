import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, invoiceRules, invoiceSchema, type FlowWorkspace } from '../../support/flow';

const good = { customer: 'Ada', email: 'ada@example.com', items: [{ price: 10, qty: 2 }] };

describe('Flow submissions: test and validate', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let gate: any;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app, 'starter');
    gate = await createGate(app, ws.key, { name: 'Invoices', schema: invoiceSchema, businessRules: invoiceRules });
  });
  afterAll(() => app.close());

  it('validate answers the spec 200 body and records the run with its schema version', async () => {
    const res = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: good });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      shortId: expect.stringMatching(/^frun_[0-9A-Za-z]{16}$/),
      status: 'validated',
      validation_id: expect.any(String),
      validated_payload: good,
      layers: { schema: 'pass', business_rules: 'pass' },
    });
    const run = await app.request('GET', `/api/flow/runs/${res.body.shortId}`, { token: ws.key });
    // Nothing to render, approve or deliver: the run completes at validation.
    expect(run.body).toMatchObject({ id: res.body.runId, status: 'completed', source: 'rest', schemaVersion: 1, inputPayload: good, completedAt: expect.any(String) });
    expect(run.body.validation).toMatchObject({ validation_id: res.body.validation_id, valid: true, validated_payload: good });

    await app.request('PUT', `/api/flow/gates/${gate.id}/schema`, { token: ws.key, body: { schema: invoiceSchema, businessRules: invoiceRules } });
    const v2 = await app.request('POST', `/api/flow/gates/${gate.slug}/validate`, { token: ws.key, body: good });
    expect((await app.request('GET', `/api/flow/runs/${v2.body.runId}`, { token: ws.key })).body.schemaVersion).toBe(2);
  });

  it('validate answers the spec 422 body: schema failure, rules skipped', async () => {
    const res = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'A', items: [{ price: 1 }, { price: -5 }] } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      success: false,
      runId: expect.any(String),
      shortId: expect.stringMatching(/^frun_/),
      status: 'validation_failed',
      validation_id: expect.any(String),
      error: {
        code: 'VALIDATION_FAILED',
        message: expect.any(String),
        layer: 'schema',
        // Postgres jsonb orders object keys (shorter first), so details follow that order, not the request's.
        details: [
          { field: 'items[1].price', code: 'MIN', message: expect.any(String) },
          { field: 'customer', code: 'MIN_LENGTH', message: expect.any(String) },
        ],
      },
      layers: { schema: 'fail', business_rules: 'skipped' },
    });
    const run = await app.request('GET', `/api/flow/runs/${res.body.runId}`, { token: ws.key });
    expect(run.body).toMatchObject({ status: 'validation_failed', validation: { valid: false, validated_payload: null, layers: { schema: 'fail' } } });
  });

  it('validate answers 422 at the business-rules layer', async () => {
    const res = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'Ada', items: [{ price: 0, qty: 1 }] } });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ layer: 'business_rules', details: [{ field: 'total', code: 'RULE', message: 'The total must be above zero' }] });
    expect(res.body.layers).toEqual({ schema: 'pass', business_rules: 'fail' });
  });

  it('test is a dry run with a step per layer and rule, and records nothing', async () => {
    const before = (await app.request('GET', '/api/flow/runs', { token: ws.key })).body.meta.total;
    const res = await app.request('POST', `/api/flow/gates/${gate.shortId}/test`, { token: ws.key, body: { customer: 'Ada', items: [{ price: 0, qty: 1 }] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: false,
      durationMs: expect.any(Number),
      layers: { schema: 'pass', business_rules: 'fail' },
      failedLayer: 'business_rules',
      steps: [
        { name: 'schema', status: 'pass', durationMs: expect.any(Number), errors: [] },
        {
          name: 'Total above zero',
          status: 'fail',
          durationMs: expect.any(Number),
          ruleId: 'total',
          expression: invoiceRules[0].expression,
          errors: [{ field: 'total', code: 'RULE', ruleId: 'total', message: 'The total must be above zero' }],
        },
      ],
    });
    expect((await app.request('GET', '/api/flow/runs', { token: ws.key })).body.meta.total).toBe(before);
  });

  it('takes freetext as text/plain or as a JSON string', async () => {
    const ft = await createGate(app, ws.key, {
      name: 'Notes',
      validationMode: 'freetext',
      freetextConfig: { minLength: 5, maxLength: 200, forbiddenPatterns: ['(?:secret|password)'] },
      businessRules: [{ id: 'two-words', expression: 'words >= 2', message: 'At least two words' }],
    });
    const plain = await app.request('POST', `/api/flow/gates/${ft.id}/validate`, { token: ws.key, rawBody: 'Hello there world', headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(200);
    expect(plain.body.validated_payload).toBe('Hello there world');
    const json = await app.request('POST', `/api/flow/gates/${ft.id}/validate`, { token: ws.key, body: 'Hello again' });
    expect(json.status).toBe(200);
    const forbidden = await app.request('POST', `/api/flow/gates/${ft.id}/validate`, { token: ws.key, rawBody: 'my password is x', headers: { 'content-type': 'text/plain' } });
    expect(forbidden.status).toBe(422);
    expect(forbidden.body.error.details).toEqual([{ field: 'text', code: 'PATTERN', message: expect.stringMatching(/forbidden/) }]);
    const oneWord = await app.request('POST', `/api/flow/gates/${ft.id}/test`, { token: ws.key, rawBody: 'Singleword', headers: { 'content-type': 'text/plain' } });
    expect(oneWord.body.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['freetext', 'pass'],
      ['two-words', 'fail'],
    ]);
    const object = await app.request('POST', `/api/flow/gates/${ft.id}/validate`, { token: ws.key, body: { text: 'hi' } });
    expect(object.status).toBe(422);
    expect(object.body.error.details[0]).toMatchObject({ field: 'text', code: 'TYPE' });
  });

  it('refuses a payload over 1 MB with 413 ERR_FLOW_RUN_005', async () => {
    const big = { customer: 'x'.repeat(1024 * 1024 + 10), items: [] };
    for (const path of ['validate', 'test']) {
      const res = await app.request('POST', `/api/flow/gates/${gate.id}/${path}`, { token: ws.key, body: big });
      expect([path, res.status, res.body.code]).toEqual([path, 413, 'ERR_FLOW_RUN_005']);
    }
    const runs = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: big } });
    expect([runs.status, runs.body.code]).toEqual([413, 'ERR_FLOW_RUN_005']);
  });

  it('refuses content over the plan limit in characters (Starter: 100K) with ERR_FLOW_LIMIT_003', async () => {
    const res = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'é'.repeat(100_001), items: [] } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'ERR_FLOW_LIMIT_003', relatedInfo: { limit: 100_000 } });
    // 60,000 two-byte characters: over 100K bytes but within 100K characters.
    const ok = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'é'.repeat(60_000), items: [{ price: 1, qty: 1 }] } });
    expect(ok.status).toBe(200);
  });

  it('refuses submissions to a paused or archived gate with 409 FLOW.GATE_PAUSED, test still works', async () => {
    const paused = await createGate(app, ws.key, { name: 'Paused', schema: invoiceSchema });
    for (const status of ['paused', 'archived']) {
      await app.request('PUT', `/api/flow/gates/${paused.id}`, { token: ws.key, body: { status } });
      const res = await app.request('POST', `/api/flow/gates/${paused.id}/validate`, { token: ws.key, body: good });
      expect([status, res.status, res.body.code]).toEqual([status, 409, 'FLOW.GATE_PAUSED']);
      const run = await app.request('POST', `/api/flow/gates/${paused.id}/runs`, { token: ws.key, body: { payload: good } });
      expect(run.status).toBe(409);
    }
    expect((await app.request('POST', `/api/flow/gates/${paused.id}/test`, { token: ws.key, body: good })).status).toBe(200);
    await app.request('PUT', `/api/flow/gates/${paused.id}`, { token: ws.key, body: { status: 'active' } });
    expect((await app.request('POST', `/api/flow/gates/${paused.id}/validate`, { token: ws.key, body: good })).status).toBe(200);
  });

  it('enforces the Free plan: 500 runs per UTC month, then 429 ERR_FLOW_LIMIT_002', async () => {
    const free = await flowWorkspace(app);
    const g = await createGate(app, free.key, { name: 'Capped' });
    await app.services.db.query(
      `INSERT INTO flow_runs (id, short_id, gate_id, project_id, schema_version, status, source, input_payload, validation)
       SELECT gen_random_uuid(), 'frun_seed' || i, $1, $2, 1, 'completed', 'rest', '{}', '{}' FROM generate_series(1, 499) i`,
      [g.id, free.projectId],
    );
    expect((await app.request('POST', `/api/flow/gates/${g.id}/validate`, { token: free.key, body: {} })).status).toBe(200);
    const over = await app.request('POST', `/api/flow/gates/${g.id}/validate`, { token: free.key, body: {} });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'ERR_FLOW_LIMIT_002', relatedInfo: { limit: 500 } });
    // Dry runs use no quota.
    expect((await app.request('POST', `/api/flow/gates/${g.id}/test`, { token: free.key, body: {} })).status).toBe(200);
    // Runs of an earlier month do not count.
    await app.services.db.query(`UPDATE flow_runs SET created_at = now() - interval '40 days' WHERE project_id = $1 AND short_id LIKE 'frun_seed%'`, [free.projectId]);
    expect((await app.request('POST', `/api/flow/gates/${g.id}/validate`, { token: free.key, body: {} })).status).toBe(200);
  });
});
