import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { ReportJobEntity } from '../../../db/reporting/job.entity';
import { insertJobRun, newJobRun } from '../../../db/reporting/job-run-state';
import { startTestApp, type TestApp, type TestResponse } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createGate, flowWorkspace, invoiceRules, invoiceSchema } from '../../support/flow';
import { createTestDatasource } from '../../support/reporting';
import { solidPng } from '../../support/rendering-pdf';
import { buildTemplate, createTemplate, personalProjectId } from '../../support/templates';
import { totp } from '../../support/totp';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { documentedAnswers, type DocumentedAnswers } from '../../support/openapi-answers';

/**
 * Real answers of the operations issue 36 gave response schemas: the account export and deletion,
 * two-factor authentication, template checks, import and export (under each prefix), Flow's validate
 * (200 and 422), reporting's task, version detail and restores, delivery retries and job-run cancel,
 * and the agents' key, health, tasks and protocol. Each is validated with ajv against the schema its
 * operation documents; the fixed objects allow no undocumented field.
 */
let t: TestApp;
let receiver: WebhookReceiver;
let validatorOf: DocumentedAnswers['validatorOf'];
let expectDocumented: DocumentedAnswers['expectDocumented'];
const suffix = randomBytes(4).toString('hex');
const table = `openapi_more_${suffix}`;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  // The report's datasource (the test database) and the webhook URL are on 127.0.0.1, a private address outbound connections refuse unless allowed.
  t = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  ({ validatorOf, expectDocumented } = await documentedAnswers(t));
});
afterAll(async () => {
  await t?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
  await t?.close();
  await receiver?.stop();
});

test('the account export, deletion and two-factor answers are as documented', async () => {
  const user = await signUp(t, { verified: true });
  const exported = await t.request('GET', '/api/users/me/export', { token: user.accessToken });
  expectDocumented(exported, 'get', '/api/users/me/export', 200);
  expect(exported.body.personal).toMatchObject({ id: user.id, email: user.email });
  expect(validatorOf('get', '/api/users/me/export', 200)({ ...exported.body, undocumented: 1 }).valid).toBe(false);

  expectDocumented(await t.request('GET', '/api/users/me/2fa/status', { token: user.accessToken }), 'get', '/api/users/me/2fa/status', 200);
  const setup = await t.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
  expectDocumented(setup, 'post', '/api/users/me/2fa/enable', 200);
  const verified = await t.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(setup.body.secret) } });
  expectDocumented(verified, 'post', '/api/users/me/2fa/verify', 200);
  expect(verified.body.refreshToken).toMatch(/^fmr_/);
  // Verifying ended the other sessions: the new access token goes on.
  const token = verified.body.accessToken as string;
  const status = await t.request('GET', '/api/users/me/2fa/status', { token });
  expectDocumented(status, 'get', '/api/users/me/2fa/status', 200);
  expect(status.body).toEqual({ enabled: true, backupCodesRemaining: 10 });
  const codes = await t.request('POST', '/api/users/me/2fa/backup-codes', { token, body: { password: user.password } });
  expectDocumented(codes, 'post', '/api/users/me/2fa/backup-codes', 200);
  expectDocumented(await t.request('POST', '/api/users/me/2fa/disable', { token, body: { password: user.password, code: codes.body.backupCodes[0] } }), 'post', '/api/users/me/2fa/disable', 200);

  const deleted = await t.request('DELETE', '/api/users/me', { token, body: { password: user.password } });
  expectDocumented(deleted, 'delete', '/api/users/me', 200);
});

// A browser session keeps its refresh token in the cookie: the answer leaves it out, still as documented.
test('a browser session\'s 2FA verify answer, without the refresh token, is as documented', async () => {
  const user = await signUp(t);
  const setup = await t.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
  const verified = await t.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, headers: { 'x-formwork-session': 'cookie' }, body: { code: totp(setup.body.secret) } });
  expectDocumented(verified, 'post', '/api/users/me/2fa/verify', 200);
  expect(verified.body.refreshToken).toBeUndefined();
});

test('template checks, import and export answer as documented under each prefix', async () => {
  const user = await signUp(t);
  const token = user.accessToken;
  const body = buildTemplate({ name: `Export ${suffix}` });
  const template = await createTemplate(t, token, body);

  async function upload(prefix: string, file: string, fields: Record<string, string> = {}): Promise<TestResponse> {
    const form = new FormData();
    form.append('file', new Blob([file], { type: 'application/json' }), 'template.json');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${t.url}${prefix}/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, any> } as TestResponse;
  }

  for (const prefix of ['/api/templates/attachment', '/api/templates', '/api/v1/templates']) {
    const valid = await t.request('POST', `${prefix}/validate-schema`, { token, body: { templateType: 'pdf', schema: body.schema, variables: body.variables } });
    expectDocumented(valid, 'post', `${prefix}/validate-schema`, 200);
    const invalid = await t.request('POST', `${prefix}/validate-schema`, { token, body: { templateType: 'pdf', schema: { sections: [{ components: [{ type: 'nope' }] }] } } });
    expectDocumented(invalid, 'post', `${prefix}/validate-schema`, 200);
    expect(invalid.body.valid).toBe(false);
    expectDocumented(await t.request('POST', `${prefix}/validate-variables`, { token, body: { variables: body.variables } }), 'post', `${prefix}/validate-variables`, 200);
    const broken = await t.request('POST', `${prefix}/validate-variables`, { token, body: { variables: [{ name: 'a', type: 'string' }, { name: 'a', type: 'string' }] } });
    expectDocumented(broken, 'post', `${prefix}/validate-variables`, 200);
    expect(broken.body.errors).not.toEqual([]);

    const file = await t.request('GET', `${prefix}/${template.id}/export`, { token });
    expectDocumented(file, 'get', `${prefix}/{id}/export`, 200);
    expect(file.body).toMatchObject({ formatVersion: 1, name: body.name, schema: body.schema });

    const text = JSON.stringify({ ...file.body, name: `Imported ${prefix} ${suffix}` });
    const created = await upload(prefix, text);
    expectDocumented(created, 'post', `${prefix}/import`, 201);
    expect(created.body.status).toBe('created');
    const skipped = await upload(prefix, text, { duplicateHandling: 'skip' });
    expectDocumented(skipped, 'post', `${prefix}/import`, 200);
    const overwritten = await upload(prefix, text, { duplicateHandling: 'overwrite' });
    expectDocumented(overwritten, 'post', `${prefix}/import`, 200);
    expect([skipped.body.status, overwritten.body.status]).toEqual(['skipped', 'overwritten']);
  }

  // A file carries the project's assets the definition names.
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(solidPng(8, 8, [255, 0, 0]))]), 'logo.png');
  const asset = await fetch(`${t.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const reference = ((await asset.json()) as { reference: string }).reference;
  const withLogo = await createTemplate(t, token, { name: `Logo ${suffix}`, schema: { sections: [{ id: 'main', components: [{ id: 'logo', type: 'image', props: { src: reference, alt: 'Logo' } }] }] } });
  const carried = await t.request('GET', `/api/templates/${withLogo.id}/export`, { token });
  expectDocumented(carried, 'get', '/api/templates/{id}/export', 200);
  expect(carried.body.assets.map((a: { ref: string }) => a.ref)).toEqual([reference]);
});

test('Flow validate answers as documented, valid (200) and not (422)', async () => {
  const ws = await flowWorkspace(t);
  const gate = await createGate(t, ws.key, { name: `Invoices ${suffix}`, schema: invoiceSchema, businessRules: invoiceRules });
  const valid = await t.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'Ada', items: [{ price: 10, qty: 2 }] } });
  expectDocumented(valid, 'post', '/api/flow/gates/{id}/validate', 200);
  const invalid = await t.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'A', items: [] } });
  expectDocumented(invalid, 'post', '/api/flow/gates/{id}/validate', 422);
  expect(invalid.body.error.details).not.toEqual([]);
  const rule = await t.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'Ada', items: [{ price: 0, qty: 1 }] } });
  expectDocumented(rule, 'post', '/api/flow/gates/{id}/validate', 422);
  expect(rule.body.error.layer).toBe('business_rules');
});

describe('reporting and agents', () => {
  let user: SignedUpUser;
  let projectId: string;
  beforeAll(async () => {
    user = await signUp(t, { verified: true });
    projectId = await personalProjectId(t, user.id);
    await t.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
    await t.services.db.query(`INSERT INTO ${table} VALUES (1, 'a'), (2, 'b')`);
  });

  test('versions, restores, delivery retries and job-run cancel answer as documented', async () => {
    const token = user.accessToken;
    const datasource = await createTestDatasource(t, token, `Rows ${suffix}`);
    const query = await t.request('POST', '/api/reporting/queries', { token, body: { name: `Q ${suffix}`, datasourceId: datasource.id, text: `SELECT label FROM ${table} ORDER BY id` } });
    expect((await t.request('POST', `/api/reporting/queries/${query.body.id}/publish`, { token, body: {} })).status).toBe(201);
    const restoredQuery = await t.request('POST', `/api/reporting/queries/${query.body.id}/versions/1/restore`, { token, body: { releaseNotes: 'Again' } });
    expectDocumented(restoredQuery, 'post', '/api/reporting/queries/{id}/versions/{version}/restore', 200);
    expect(restoredQuery.body.newVersion).toBe(2);

    const report = await t.request('POST', '/api/reporting/reports', { token, body: { name: `R ${suffix}`, datasets: [{ name: 'items', queryId: query.body.id }], outputs: [{ format: 'csv' }] } });
    expect((await t.request('POST', `/api/reporting/reports/${report.body.id}/publish`, { token, body: {} })).status).toBe(201);
    const version = await t.request('GET', `/api/reporting/reports/${report.body.id}/versions/1`, { token });
    expectDocumented(version, 'get', '/api/reporting/reports/{id}/versions/{version}', 200);
    expect(validatorOf('get', '/api/reporting/reports/{id}/versions/{version}', 200)({ ...version.body, undocumented: 1 }).valid).toBe(false);
    expectDocumented(await t.request('POST', `/api/reporting/reports/${report.body.id}/versions/1/restore`, { token, body: {} }), 'post', '/api/reporting/reports/{id}/versions/{version}/restore', 200);

    // A run whose webhook answers 404 fails at delivery; the delivery retried by hand.
    receiver.respondOn('/gone', [], 404);
    const channel = await t.request('POST', '/api/reporting/channels', { token, body: { name: `Hook ${suffix}`, kind: 'webhook', config: { url: `${receiver.url}/gone` } } });
    expect(channel.status).toBe(201);
    const run = await t.request('POST', `/api/reporting/reports/${report.body.id}/runs`, { token, body: { channelIds: [channel.body.id] } });
    expect(run.status).toBe(201);
    const failed = await waitFor(
      async () => {
        const res = await t.request('GET', `/api/reporting/runs/${run.body.runId}/deliveries`, { token });
        return res.body.data?.[0]?.status === 'failed' ? res.body.data[0] : undefined;
      },
      { timeoutMs: 120_000, what: 'the run\'s delivery to fail' },
    );
    receiver.respondOn('/gone', [], 200);
    const retried = await t.request('POST', `/api/reporting/deliveries/${failed.id}/retry`, { token });
    expectDocumented(retried, 'post', '/api/reporting/deliveries/{deliveryId}/retry', 200);
    expect(retried.body.deliveryId).toBe(failed.id);

    // A job run, queued and not started (its workflow is not pending), cancelled; then its failed deliveries (none) re-sent.
    const job = await t.request('POST', '/api/reporting/jobs', { token, body: { name: `J ${suffix}`, items: [{ reportId: report.body.id }] } });
    expect(job.status).toBe(201);
    const jobRun = { ...newJobRun({ job: await t.services.db.getRepository(ReportJobEntity).findOneByOrFail({ id: job.body.id }), trigger: 'manual' }), workflowPending: false };
    await insertJobRun(t.services.db, jobRun);
    const cancelled = await t.request('POST', `/api/reporting/job-runs/${jobRun.id}/cancel`, { token });
    expectDocumented(cancelled, 'post', '/api/reporting/job-runs/{id}/cancel', 200);
    expect(cancelled.body).toMatchObject({ id: jobRun.id, status: 'cancelled' });
    const redelivered = await t.request('POST', `/api/reporting/job-runs/${jobRun.id}/retry-deliveries`, { token });
    expectDocumented(redelivered, 'post', '/api/reporting/job-runs/{id}/retry-deliveries', 202);
    expect(redelivered.body.retried).toBe(0);
  });

  test('an agent\'s key, health, tasks and protocol answers are as documented', async () => {
    const token = user.accessToken;
    const agent = await t.request('POST', '/api/agents', { token, body: { name: `Agent ${suffix}` } });
    expect(agent.status).toBe(201);
    const agentCall = (method: string, path: string, body?: unknown) => t.request(method, `/api/agents/me${path}`, { token: agent.body.token, ...(body !== undefined ? { body } : {}) });

    const publicKey = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const session = await agentCall('POST', '/sessions', { version: '1.0.0', hostname: 'db-host', platform: 'linux', capabilities: ['postgres'], maxConcurrency: 2, publicKey });
    expectDocumented(session, 'post', '/api/agents/me/sessions', 201);
    const sessionId = session.body.sessionId as string;
    const confirmed = await t.request('POST', `/api/agents/${agent.body.id}/key/confirm`, { token, body: { fingerprint: session.body.keyFingerprint } });
    expectDocumented(confirmed, 'post', '/api/agents/{id}/key/confirm', 200);
    expect(confirmed.body.keyStatus).toBe('confirmed');

    // A datasource bound to the agent (inserted, as tests/integration/agents does) and a query task on it.
    const datasourceId = randomUUID();
    await t.services.db.query(
      `INSERT INTO reporting_datasources (id, project_id, short_id, name, kind, connection_mode, agent_id, config, secrets, secret_mode, pool, defaults)
       VALUES ($1, $2, $3, $4, 'postgres', 'agent', $5, $6, '{}', 'agent_local', '{}', '{}')`,
      [datasourceId, projectId, `rds_${randomBytes(8).toString('hex')}`, `Behind ${suffix}`, agent.body.id, { host: 'db.internal', port: 5432, database: 'sales', user: 'ro' }],
    );
    const taskId = `atk_${randomBytes(8).toString('hex')}`;
    await t.services.db.query(`INSERT INTO reporting_agent_tasks (id, project_id, short_id, agent_id, kind, datasource_id, run_id, payload) VALUES ($1, $2, $3, $4, 'query', $5, NULL, $6)`, [
      randomUUID(),
      projectId,
      taskId,
      agent.body.id,
      datasourceId,
      { statement: { dialect: 'postgres', sql: 'SELECT 1', values: [] }, limits: { maxRows: 10, timeoutSeconds: 60, maxBytes: 1_000_000 } },
    ]);
    const queued = await t.request('GET', `/api/reporting/tasks/${taskId}`, { token });
    expectDocumented(queued, 'get', '/api/reporting/tasks/{taskId}', 200);
    expect(queued.body.result).toBeUndefined();

    const leased = await agentCall('GET', `/tasks/next?sessionId=${sessionId}&wait=0`);
    expectDocumented(leased, 'get', '/api/agents/me/tasks/next', 200);
    expect(leased.body.taskId).toBe(taskId);
    const beat = await agentCall('POST', '/heartbeat', { sessionId, running: [taskId], load: { running: 1, capacity: 2 }, pools: [{ datasourceId, size: 1, max: 2, idle: 0, waiting: 1, lastError: 'slow' }] });
    expectDocumented(beat, 'post', '/api/agents/me/heartbeat', 200);
    expect(Object.keys(beat.body.leaseExpiresAt)).toEqual([taskId]);

    const health = await t.request('GET', `/api/agents/${agent.body.id}/health`, { token });
    expectDocumented(health, 'get', '/api/agents/{id}/health', 200);
    expect(health.body.pools).toEqual([expect.objectContaining({ datasourceId, lastError: 'slow' })]);
    const tasks = await t.request('GET', `/api/agents/${agent.body.id}/tasks`, { token });
    expectDocumented(tasks, 'get', '/api/agents/{id}/tasks', 200);
    expect(tasks.body.data.map((task: { id: string }) => task.id)).toEqual([taskId]);

    const failure = await agentCall('POST', `/tasks/${taskId}/failure`, { code: 'CONNECT', message: 'refused', retryable: false });
    expect(failure.status).toBe(200);
    const ended = await t.request('GET', `/api/reporting/tasks/${taskId}`, { token });
    expectDocumented(ended, 'get', '/api/reporting/tasks/{taskId}', 200);
    expect(ended.body).toMatchObject({ status: 'failed', result: { error: expect.anything() } });

    const cleared = await t.request('DELETE', `/api/agents/${agent.body.id}/key`, { token });
    expectDocumented(cleared, 'delete', '/api/agents/{id}/key', 200);
    expect(cleared.body.keyStatus).toBe('none');
  });
});
