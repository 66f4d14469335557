import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { callError, callOk, connectMcp, type McpConnection } from '../../support/mcp';

const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };

describe('MCP server, hostile callers', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let other: FlowWorkspace;
  let gate: any;
  let mcp: McpConnection;
  let intruder: McpConnection;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app);
    other = await flowWorkspace(app);
    gate = await createGate(app, ws.key, { name: 'Private', schema: invoiceSchema });
    mcp = await connectMcp(app, ws.key);
    intruder = await connectMcp(app, other.key);
  });
  afterAll(async () => {
    await mcp?.close();
    await intruder?.close();
    await app.close();
  });

  it('refuses a 2 MB tool argument with a clear error, records nothing, and keeps serving', async () => {
    const huge = { customer: 'Ada', items: [{ price: 1 }], blob: 'x'.repeat(2 * 1024 * 1024) };
    const call = mcp.client.callTool({ name: 'submit_run', arguments: { gateId: gate.id, payload: huge } });
    await expect(call).rejects.toThrow(/"statusCode":413,"code":"ERR_REQ_002".*send a smaller payload/s);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_runs WHERE gate_id = $1`, [gate.id]);
    expect(n).toBe(0);
    expect((await callOk(mcp.client, 'whoami')).projectId).toBe(ws.projectId);
  });

  it('a payload under the message limit but over the 1 MB payload limit is a tool error with ERR_FLOW_RUN_005', async () => {
    const over = { customer: 'Ada', items: [{ price: 1 }], blob: 'x'.repeat(1024 * 1024 + 10) };
    expect(await callError(mcp.client, 'submit_run', { gateId: gate.id, payload: over })).toMatchObject({ code: 'ERR_FLOW_RUN_005', status: 413, nextStep: 'Send a smaller payload.' });
  });

  it('a tools/call for an unknown tool is a JSON-RPC invalid-params error', async () => {
    const call = mcp.client.callTool({ name: 'approve_run', arguments: { runId: 'x' } });
    await expect(call).rejects.toBeInstanceOf(McpError);
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('Unknown tool: approve_run') });
  });

  it('malformed JSON-RPC is refused with the protocol errors, not a crash', async () => {
    const post = (rawBody: string) => app.request('POST', '/mcp', { token: ws.key, rawBody, headers: { ...headers, 'content-type': 'application/json' } });
    const notJson = await post('{"jsonrpc": "2.0", "method": ');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    const notRpc = await post(JSON.stringify({ hello: 'world' }));
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error.code).toBe(-32700);
    const noMethod = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/explode', params: {} }));
    expect(noMethod.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: ErrorCode.MethodNotFound } });
    const badArgs = await post(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 42 } }));
    // The SDK answers a request its schema refuses with InternalError, naming the field.
    expect(badArgs.body).toMatchObject({ id: 8, error: { code: ErrorCode.InternalError, message: expect.stringMatching(/name[\s\S]*expected string|expected string[\s\S]*name/) } });
    const deep = await post(`${'['.repeat(5000)}${']'.repeat(5000)}`);
    expect([deep.status, deep.body.code]).toEqual([400, 'ERR_REQ_005']);
    const unsupported = await app.request('POST', '/mcp', {
      token: ws.key,
      body: { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      headers: { ...headers, 'mcp-protocol-version': '1999-01-01' },
    });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error.message).toContain('Unsupported protocol version');
    expect((await callOk(mcp.client, 'whoami')).projectId).toBe(ws.projectId);
  });

  it("a key of another project cannot read or write this project's gates, runs or jobs", async () => {
    const run = await callOk(mcp.client, 'submit_run', { gateId: gate.id, payload: { customer: 'Ada', items: [{ price: 1 }] } });
    expect(await callError(intruder.client, 'get_run', { runId: run.id })).toMatchObject({ code: 'FLOW.RUN_NOT_FOUND' });
    expect(await callError(intruder.client, 'get_run', { runId: run.shortId })).toMatchObject({ code: 'FLOW.RUN_NOT_FOUND' });
    expect(await callError(intruder.client, 'list_runs', { gateId: gate.id })).toMatchObject({ code: 'FLOW.GATE_NOT_FOUND' });
    expect((await callOk(intruder.client, 'list_runs', {})).meta.total).toBe(0);
    expect(await callError(intruder.client, 'get_gate_schema', { gateId: gate.id })).toMatchObject({ code: 'FLOW.GATE_NOT_FOUND' });
    expect(await callError(intruder.client, 'submit_run', { gateId: gate.id, payload: {} })).toMatchObject({ code: 'FLOW.GATE_NOT_FOUND' });
    expect((await callOk(intruder.client, 'list_gates', {})).data).toEqual([]);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_runs WHERE gate_id = $1`, [gate.id]);
    expect(n).toBe(1);
  });

  it('a revoked key is refused on the next request, stateless', async () => {
    const { createKey } = await import('../../support/api-keys');
    const key = await createKey(app, ws.user.accessToken);
    const conn = await connectMcp(app, key.plainKey);
    try {
      expect((await callOk(conn.client, 'whoami')).projectId).toBe(ws.projectId);
      const revoked = await app.request('POST', `/api/api-keys/${key.id}/revoke`, { token: ws.user.accessToken });
      expect(revoked.status).toBe(200);
      await expect(conn.client.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow(/"statusCode":401,"code":"ERR_AKEY_003"/);
    } finally {
      await conn.close().catch(() => undefined);
    }
  });
});
