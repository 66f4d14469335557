import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createKey } from '../../support/api-keys';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { callError, callOk, connectMcp, type McpConnection } from '../../support/mcp';

const good = { customer: 'Ada', items: [{ price: 10, qty: 2 }] };
const ALL_TOOLS = ['whoami', 'list_gates', 'get_gate_schema', 'validate_payload', 'submit_run', 'get_run', 'list_runs', 'list_templates', 'get_template_fields', 'generate_document', 'get_job'];

describe('MCP server (POST /mcp, Streamable HTTP, stateless)', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let gate: any;
  let mcp: McpConnection;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await flowWorkspace(app);
    gate = await createGate(app, ws.key, { name: 'Invoices', schema: invoiceSchema });
    mcp = await connectMcp(app, ws.key);
  });
  afterAll(async () => {
    await mcp?.close();
    await app.close();
  });

  it('speaks the newest revision with the SDK client, and the 2025 revisions an older client asks for', async () => {
    expect(mcp.transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(mcp.transport.sessionId).toBeUndefined();
    for (const revision of ['2025-06-18', '2025-03-26']) {
      const old = await connectMcp(app, ws.key, { revision });
      try {
        expect(old.transport.protocolVersion).toBe(revision);
        const me = await callOk(old.client, 'whoami');
        expect(me.projectId).toBe(ws.projectId);
        const run = await callOk(old.client, 'submit_run', { gateId: gate.shortId, payload: good });
        expect(run).toMatchObject({ status: 'completed', source: 'mcp' });
      } finally {
        await old.close();
      }
    }
  });

  it('lists every tool with input and output schemas and hints; no approve or reject tool', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort());
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations).toEqual(expect.objectContaining({ readOnlyHint: expect.any(Boolean), idempotentHint: expect.any(Boolean), destructiveHint: false }));
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.submit_run.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(byName.get_run.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  });

  it('whoami names the project, the key and its flags', async () => {
    const me = await callOk(mcp.client, 'whoami');
    expect(me).toMatchObject({ projectId: ws.projectId, credential: { kind: 'apiKey', apiKeyId: expect.any(String) }, permissions: { read_templates: true, manage_webhooks: false } });
    expect(me.tools.sort()).toEqual([...ALL_TOOLS].sort());
  });

  it('submit_run records an mcp run, visible in GET /api/flow/runs?source=mcp and in analytics', async () => {
    const fresh = await createGate(app, ws.key, { name: 'Fresh', schema: invoiceSchema });
    const run = await callOk(mcp.client, 'submit_run', { gateId: fresh.id, payload: good, metadata: { orderId: 'M-1' } });
    expect(run).toMatchObject({ gateId: fresh.id, status: 'completed', source: 'mcp', inputPayload: good, metadata: { orderId: 'M-1' } });
    const rest = await app.request('POST', `/api/flow/gates/${fresh.id}/runs`, { token: ws.key, body: { payload: good } });
    expect(rest.body.source).toBe('rest');

    const listed = await app.request('GET', '/api/flow/runs?source=mcp&limit=100', { token: ws.key });
    expect(listed.body.data.map((r: any) => r.id)).toContain(run.id);
    expect(listed.body.data.every((r: any) => r.source === 'mcp')).toBe(true);
    expect(listed.body.data.map((r: any) => r.id)).not.toContain(rest.body.id);

    const outcomes = await app.request('GET', `/api/flow/analytics/run-outcomes?gateId=${fresh.id}`, { token: ws.key });
    expect(outcomes.body.bySource).toEqual({ rest: 1, mcp: 1 });
  });

  it('a payload that fails validation is a normal result saying what to fix', async () => {
    const dry = await mcp.client.callTool({ name: 'validate_payload', arguments: { gateId: gate.id, payload: { items: 'x' } } });
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ valid: false, failedLayer: 'schema', howToFix: expect.stringContaining('customer') });
    expect((dry.structuredContent as any).errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'customer', code: 'REQUIRED' })]));

    const submitted = await mcp.client.callTool({ name: 'submit_run', arguments: { gateId: gate.id, payload: { items: 'x' } } });
    expect(submitted.isError).toBeFalsy();
    expect(submitted.structuredContent).toMatchObject({ status: 'validation_failed', source: 'mcp', howToFix: expect.stringContaining('customer') });
  });

  it('real failures are isError results with the catalogued code and a next step', async () => {
    const missing = await callError(mcp.client, 'get_run', { runId: 'frun_doesnotexist' });
    expect(missing).toMatchObject({ code: 'FLOW.RUN_NOT_FOUND', status: 404, nextStep: expect.stringContaining('list_runs') });
    const badArg = await callError(mcp.client, 'list_runs', { limit: 500 });
    expect(badArg).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'limit' }, nextStep: expect.stringContaining("'limit'") });
    const noGate = await callError(mcp.client, 'submit_run', { gateId: 'no-such-gate', payload: good });
    expect(noGate).toMatchObject({ code: 'FLOW.GATE_NOT_FOUND', nextStep: expect.stringContaining('list_gates') });
  });

  it('lists page like REST, and long payload echoes are cut with a note', async () => {
    const page = await callOk(mcp.client, 'list_runs', { limit: 1, page: 2, source: 'mcp' });
    expect(page.data).toHaveLength(1);
    expect(page.meta).toMatchObject({ page: 2, limit: 1, hasPreviousPage: true });

    const big = { customer: 'Ada', items: [{ price: 1, qty: 1 }], note: 'x'.repeat(40 * 1024) };
    const run = await callOk(mcp.client, 'submit_run', { gateId: gate.id, payload: big });
    expect(run.inputPayload).toBeNull();
    expect(run.notes.inputPayload).toMatch(/16384.*GET \/api\/flow\/runs\//);
    const rest = await app.request('GET', `/api/flow/runs/${run.id}`, { token: ws.key });
    expect(rest.body.inputPayload).toEqual(big);
  });

  it('tools follow the key: a key without a flag does not see its tools, and calling one anyway is an error result', async () => {
    const narrow = await createKey(app, ws.user.accessToken, { name: 'flow only', permissions: { read_documents: false, generate_documents: false, read_templates: false } });
    const conn = await connectMcp(app, narrow.plainKey);
    try {
      const names = (await conn.client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('generate_document');
      expect(names).not.toContain('list_templates');
      expect(names).toContain('submit_run');
      // A run's payload needs read_runs, as GET /api/flow/runs/:id does.
      expect(names).not.toContain('get_run');
      const denied = await callError(conn.client, 'generate_document', { templateId: 'x', format: 'pdf', variables: {} });
      expect(denied).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'generate_documents' }, nextStep: expect.stringContaining('generate_documents') });
    } finally {
      await conn.close();
    }
  });

  it('answers without a key 401 with the error body, and a user session 403', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const headers = { accept: 'application/json, text/event-stream' };
    const anonymous = await app.request('POST', '/mcp', { body: init, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ statusCode: 401, code: 'ERR_AUTH_003', path: '/mcp' });
    const jwt = await app.request('POST', '/mcp', { body: init, headers, token: ws.user.accessToken });
    expect(jwt.status).toBe(403);
    expect(jwt.body.code).toBe('ERR_AUTH_005');
    const stream = await app.request('GET', '/mcp', { token: ws.key, headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(405);
  });
});
