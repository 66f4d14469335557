import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, invoiceRules, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { callError, callOk, connectMcp, type McpConnection } from '../../support/mcp';
import { createTemplate, publish } from '../../support/templates';

/**
 * Each tool answers what its REST route answers for the same input: the same services, the same
 * presenters, the same project. The worker is off, so jobs and runs stay where the API left them
 * and two reads of one record are comparable field for field.
 */
describe('MCP tools and REST routes answer alike', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let gate: any;
  let template: any;
  let mcp: McpConnection;
  const good = { customer: 'Ada', email: 'ada@example.com', items: [{ price: 10, qty: 2 }] };
  const bad = { customer: 'A', email: 'nope', items: [{ price: -1, qty: 0 }], extra: true };

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app);
    gate = await createGate(app, ws.key, { name: 'Parity', schema: { ...invoiceSchema, additionalProperties: false }, businessRules: invoiceRules });
    await createGate(app, ws.key, { name: 'Second', validationMode: 'freetext', freetextConfig: { minLength: 3, maxLength: 50 } });
    template = await createTemplate(app, ws.user.accessToken);
    await publish(app, ws.user.accessToken, template.id);
    mcp = await connectMcp(app, ws.key);
  });
  afterAll(async () => {
    await mcp?.close();
    await app.close();
  });

  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(method, path, { token: ws.key, body });
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  it('whoami: the key as GET /api/api-keys/:id shows it', async () => {
    const me = await callOk(mcp.client, 'whoami');
    const key = (await app.request('GET', `/api/api-keys/${me.credential.apiKeyId}`, { token: ws.user.accessToken })).body;
    expect(me.projectId).toBe(key.teamId);
    expect(me.permissions).toEqual(key.permissions);
  });

  it('list_gates: GET /api/flow/gates with the same paging', async () => {
    const viaMcp = await callOk(mcp.client, 'list_gates', { limit: 1, page: 2 });
    const viaRest = await rest('GET', '/api/flow/gates?limit=1&page=2');
    expect(viaMcp.meta).toEqual(viaRest.meta);
    expect(viaMcp.data).toEqual(viaRest.data.map((g: any) => ({
      id: g.id, shortId: g.shortId, slug: g.slug, name: g.name, description: g.description, status: g.status,
      validationMode: g.validationMode, schemaVersion: g.schemaVersion, renderMode: g.renderMode, approvalMode: g.approvalMode,
    })));
  });

  it("get_gate_schema: the gate's schema as JSON Schema, judging payloads as the engine does", async () => {
    const viaMcp = await callOk(mcp.client, 'get_gate_schema', { gateId: gate.slug });
    const viaRest = await rest('GET', `/api/flow/gates/${gate.id}`);
    expect(viaMcp.gate).toMatchObject({ id: viaRest.id, schemaVersion: viaRest.schemaVersion, validationMode: 'variables' });
    expect(viaMcp.businessRules.map((r: any) => r.id)).toEqual(viaRest.businessRules.map((r: any) => r.id));
    expect(viaMcp.jsonSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(viaMcp.jsonSchema.required.sort()).toEqual(['customer', 'items']);
    const { $schema: _draft, ...schema } = viaMcp.jsonSchema;
    const check = new AjvJsonSchemaValidator().getValidator(schema);
    const samples = [good, bad, { customer: 'Bo', items: [] }, { customer: 'Bo', items: [{ price: 1 }] }, { items: [{ price: 1 }] }, { customer: 'Bob', items: [{ price: '1' }] }];
    for (const payload of samples) {
      const engine = await rest('POST', `/api/flow/gates/${gate.id}/test`, payload);
      const schemaStep = engine.steps.find((s: any) => s.name === 'schema');
      expect([payload, check(payload).valid]).toEqual([payload, schemaStep.status === 'pass']);
    }
    const freetext = await callOk(mcp.client, 'get_gate_schema', { gateId: 'second' });
    expect(freetext.jsonSchema).toMatchObject({ type: 'string', minLength: 3, maxLength: 50 });
  });

  it('validate_payload: POST /gates/:id/test, the same verdict and problems', async () => {
    for (const payload of [good, bad]) {
      const viaMcp = await callOk(mcp.client, 'validate_payload', { gateId: gate.id, payload });
      const viaRest = await rest('POST', `/api/flow/gates/${gate.id}/test`, payload);
      expect(viaMcp.valid).toBe(viaRest.valid);
      const restProblems = viaRest.steps.flatMap((s: any) => s.errors).map((e: any) => `${e.field}:${e.code}`).sort();
      expect(viaMcp.errors.map((e: any) => `${e.field}:${e.code}`).sort()).toEqual(restProblems);
    }
  });

  it('submit_run and get_run: POST /gates/:gateId/runs and GET /runs/:id', async () => {
    for (const payload of [good, bad]) {
      const viaMcp = await callOk(mcp.client, 'submit_run', { gateId: gate.id, payload, metadata: { ref: 'p' } });
      const viaRest = await rest('POST', `/api/flow/gates/${gate.id}/runs`, { payload, metadata: { ref: 'p' } });
      const comparable = ({ id: _i, runId: _r, shortId: _s, createdAt: _c, updatedAt: _u, completedAt: _d, source: _o, howToFix: _h, validation, ...rest }: any) =>
        ({ ...rest, validation: { ...validation, validation_id: undefined, durationMs: undefined, steps: validation.steps.map((s: any) => ({ ...s, durationMs: undefined })) } });
      expect(comparable(viaMcp)).toEqual(comparable(viaRest));
      expect([viaMcp.source, viaRest.source]).toEqual(['mcp', 'rest']);
      expect(await callOk(mcp.client, 'get_run', { runId: viaMcp.shortId })).toEqual(await rest('GET', `/api/flow/runs/${viaMcp.id}`));
    }
  });

  it('list_runs: GET /api/flow/runs and /gates/:gateId/runs with the same filters', async () => {
    expect(await callOk(mcp.client, 'list_runs', { source: 'mcp', limit: 5 })).toEqual(await rest('GET', '/api/flow/runs?source=mcp&limit=5'));
    expect(await callOk(mcp.client, 'list_runs', { gateId: gate.slug, status: 'validation_failed', sortOrder: 'asc' })).toEqual(
      await rest('GET', `/api/flow/gates/${gate.id}/runs?status=validation_failed&sortOrder=asc`),
    );
  });

  it('list_templates and get_template_fields: GET /api/templates and /api/templates/:id', async () => {
    expect(await callOk(mcp.client, 'list_templates', { limit: 10 })).toEqual(await rest('GET', '/api/templates?limit=10'));
    const fields = await callOk(mcp.client, 'get_template_fields', { templateId: template.slug });
    const viaRest = await rest('GET', `/api/templates/${template.id}`);
    expect(fields).toMatchObject({ templateId: viaRest.id, slug: viaRest.slug, outputFormats: viaRest.outputFormats, version: 1, variables: viaRest.variables });
    expect(fields.variablesSchema).toMatchObject({ type: 'object', required: ['customer'], properties: { dueDate: { type: 'string', format: 'date' } } });
  });

  it('generate_document and get_job: POST /api/documents/generate and GET /jobs/:jobId', async () => {
    const input = { templateId: template.slug, format: 'pdf', variables: { customer: 'Ada' }, filename: 'parity.pdf', metadata: { ref: 'p' } };
    const viaMcp = await callOk(mcp.client, 'generate_document', input);
    const viaRest = await rest('POST', '/api/documents/generate', input);
    expect(Object.keys(viaMcp).sort()).toEqual(Object.keys(viaRest).sort());
    expect(viaMcp).toMatchObject({ status: viaRest.status, statusUrl: `${app.url}/api/documents/jobs/${viaMcp.jobId}` });
    const jobViaMcp = await callOk(mcp.client, 'get_job', { jobId: viaMcp.jobId });
    expect(jobViaMcp).toEqual(await rest('GET', `/api/documents/jobs/${viaMcp.jobId}`));
    const { jobId: _a, createdAt: _b, ...restJob } = await rest('GET', `/api/documents/jobs/${viaRest.jobId}`);
    const { jobId: _c, createdAt: _d, ...mcpJob } = jobViaMcp;
    expect(mcpJob).toEqual(restJob);
  });

  it('idempotencyKey: generate_document and submit_run create once per key, and a repeat answers the first job or run', async () => {
    const count = async (sql: string) => (await app.services.db.query(sql, [ws.projectId]))[0].n as number;
    const jobs = () => count(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1 AND metadata->>'ref' = 'keyed'`);
    const input = { templateId: template.id, format: 'pdf', variables: { customer: 'Keyed' }, metadata: { ref: 'keyed' }, idempotencyKey: 'mcp-doc-1' };
    const first = await callOk(mcp.client, 'generate_document', input);
    expect(first.idempotentReplayed).toBeUndefined();
    const again = await callOk(mcp.client, 'generate_document', input);
    expect(again).toEqual({ ...first, idempotentReplayed: true });
    expect(await jobs()).toBe(1);
    // The same key with other arguments is refused with the catalogued code and creates nothing.
    expect(await callError(mcp.client, 'generate_document', { ...input, variables: { customer: 'Other' } })).toMatchObject({ code: 'ERR_IDEM_001' });
    expect(await jobs()).toBe(1);
    // REST and MCP keep their own operations under one key name: a REST request with it is another request.
    const restSame = await app.request('POST', '/api/documents/generate', { token: ws.key, headers: { 'Idempotency-Key': 'mcp-doc-1' }, body: { templateId: template.id, format: 'pdf', variables: { customer: 'Keyed' }, metadata: { ref: 'keyed' } } });
    expect([restSame.status, restSame.body.code]).toEqual([422, 'ERR_IDEM_001']);

    const runs = () => count(`SELECT count(*)::int AS n FROM flow_runs WHERE project_id = $1 AND metadata->>'ref' = 'keyed-run'`);
    const runInput = { gateId: gate.id, payload: good, metadata: { ref: 'keyed-run' }, idempotencyKey: 'mcp-run-1' };
    const [a, b] = await Promise.all([mcp.client.callTool({ name: 'submit_run', arguments: runInput }), mcp.client.callTool({ name: 'submit_run', arguments: runInput })]);
    // Two calls at once: one records the run; the other answers it, or says to retry (409) while the first is in flight.
    const answers = [a, b].map((r: any) => (r.isError ? JSON.parse(r.content[0].text).error : r.structuredContent));
    expect(await runs()).toBe(1);
    const runIds = new Set(answers.filter((x) => x.id).map((x) => x.id));
    expect(runIds.size).toBe(1);
    for (const x of answers.filter((y) => !y.id)) expect(x).toMatchObject({ code: 'ERR_IDEM_002' });
    const later = await callOk(mcp.client, 'submit_run', runInput);
    expect([later.id, later.idempotentReplayed]).toEqual([[...runIds][0], true]);
    expect(await runs()).toBe(1);
  });

  it('idempotencyKey: an empty or over-long key is a validation error and creates nothing', async () => {
    for (const idempotencyKey of ['', 'k'.repeat(256)]) {
      expect(await callError(mcp.client, 'submit_run', { gateId: gate.id, payload: good, idempotencyKey })).toMatchObject({ code: 'ERR_VALID_001' });
    }
  });
});
