import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { signUp } from '../../support/factories';
import { createTestDatasource } from '../../support/reporting';
import { invitationMail } from '../../support/teams';
import { buildTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver } from '../../support/webhook-receiver';
import { documentedAnswers, type DocumentedAnswers } from '../../support/openapi-answers';

/**
 * Real answers against the document's response schemas (api/openapi/resources.ts): a job generated,
 * rendered and read, a batch, a Flow gate and run, templates, API keys, a webhook subscription and
 * a report run, each validated with ajv against the schema its operation documents. The resource
 * objects allow no undocumented field, so a presenter change the document misses fails here.
 */
let t: TestApp;
let p: DocumentProject;
let validatorOf: DocumentedAnswers['validatorOf'];
let expectDocumented: DocumentedAnswers['expectDocumented'];
const table = `openapi_rows_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  // The report's datasource (the test database) and the webhook URL are on 127.0.0.1, a private address outbound connections refuse unless allowed.
  t = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  p = await setupDocumentProject(t);
  ({ validatorOf, expectDocumented } = await documentedAnswers(t));
});
afterAll(async () => {
  await t?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
  await t?.close();
});

test('document jobs and batches answer as documented', async () => {
  const generated = await t.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'Ada' } } });
  expectDocumented(generated, 'post', '/api/documents/generate', 201);
  const queued = await t.request('GET', `/api/documents/jobs/${generated.body.jobId}`, { token: p.apiKey });
  expectDocumented(queued, 'get', '/api/documents/jobs/{jobId}', 200);
  // The check has teeth: a field the document does not list, or a documented one missing, fails it.
  expect(validatorOf('get', '/api/documents/jobs/{jobId}', 200)({ ...queued.body, undocumented: 1 }).valid).toBe(false);
  expect(validatorOf('get', '/api/documents/jobs/{jobId}', 200)({ ...queued.body, createdAt: undefined }).valid).toBe(false);
  const done = await waitForJob(t, p.apiKey, generated.body.jobId);
  expect(done.status).toBe('completed');
  expectDocumented(await t.request('GET', `/api/v1/documents/jobs/${generated.body.jobId}`, { token: p.apiKey }), 'get', '/api/v1/documents/jobs/{jobId}', 200);
  expectDocumented(await t.request('GET', '/api/documents/jobs', { token: p.apiKey }), 'get', '/api/documents/jobs', 200);

  const batch = await t.request('POST', '/api/documents/generate/batch', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', documents: [{ variables: { customer: 'Ada' } }, { variables: { customer: 'Bob' } }] } });
  expectDocumented(batch, 'post', '/api/documents/generate/batch', 201);
  expectDocumented(await t.request('GET', `/api/documents/batches/${batch.body.batchId}`, { token: p.apiKey }), 'get', '/api/documents/batches/{batchId}', 200);
});

test('templates answer as documented', async () => {
  const created = await t.request('POST', '/api/templates', { token: p.user.accessToken, body: buildTemplate() });
  expectDocumented(created, 'post', '/api/templates', 201);
  expectDocumented(await t.request('GET', `/api/templates/${created.body.id}`, { token: p.user.accessToken }), 'get', '/api/templates/{id}', 200);
  expectDocumented(await t.request('GET', '/api/templates', { token: p.user.accessToken }), 'get', '/api/templates', 200);
  expectDocumented(await t.request('POST', `/api/templates/${created.body.id}/duplicate`, { token: p.user.accessToken }), 'post', '/api/templates/{id}/duplicate', 201);
});

test('projects, members, invitations, activity, API key revoke and stats and OAuth clients answer as documented (the dashboard reads them typed)', async () => {
  const token = p.user.accessToken;
  const team = await t.request('POST', '/api/teams', { token, body: { name: `Docs ${randomBytes(3).toString('hex')}` } });
  expectDocumented(team, 'post', '/api/teams', 201);
  const inTeam = { 'X-Team-Id': team.body.id };
  expectDocumented(await t.request('GET', '/api/teams', { token }), 'get', '/api/teams', 200);
  expectDocumented(await t.request('GET', `/api/teams/${team.body.id}`, { token }), 'get', '/api/teams/{id}', 200);
  expectDocumented(await t.request('PUT', `/api/teams/${team.body.id}`, { token, body: { name: 'Docs renamed' } }), 'put', '/api/teams/{id}', 200);

  const invitee = await signUp(t, { verified: true });
  const sent = await t.request('POST', '/api/teams/members/invite', { token, headers: inTeam, body: { email: invitee.email, role: 'viewer' } });
  expectDocumented(sent, 'post', '/api/teams/members/invite', 201);
  expectDocumented(await t.request('GET', '/api/teams/invitations', { token, headers: inTeam }), 'get', '/api/teams/invitations', 200);
  const mine = await t.request('GET', '/api/teams/invitations/my', { token: invitee.accessToken });
  expectDocumented(mine, 'get', '/api/teams/invitations/my', 200);
  expect(mine.body.data).toHaveLength(1);
  const { token: mailed } = await invitationMail(t, sent.body.id);
  // The invitation behind the link, read without signing in.
  expectDocumented(await t.request('GET', `/api/teams/invitations/${sent.body.id}?token=${encodeURIComponent(mailed)}`), 'get', '/api/teams/invitations/{id}', 200);
  expectDocumented(await t.request('POST', `/api/teams/invitations/${sent.body.id}/accept`, { token: invitee.accessToken, body: { token: mailed } }), 'post', '/api/teams/invitations/{id}/accept', 200);
  expectDocumented(await t.request('GET', '/api/teams/members', { token, headers: inTeam }), 'get', '/api/teams/members', 200);
  expectDocumented(await t.request('PATCH', `/api/teams/members/${invitee.id}/role`, { token, headers: inTeam, body: { role: 'member' } }), 'patch', '/api/teams/members/{id}/role', 200);
  const other = await t.request('POST', '/api/teams/members/invite', { token, headers: inTeam, body: { email: `later-${randomBytes(3).toString('hex')}@example.com` } });
  expectDocumented(await t.request('DELETE', `/api/teams/members/${other.body.id}/invitation`, { token, headers: inTeam }), 'delete', '/api/teams/members/{id}/invitation', 200);
  const decliner = await signUp(t, { verified: true });
  const declined = await t.request('POST', '/api/teams/members/invite', { token, headers: inTeam, body: { email: decliner.email } });
  expectDocumented(await t.request('POST', `/api/teams/invitations/${declined.body.id}/reject`, { token: decliner.accessToken, body: {} }), 'post', '/api/teams/invitations/{id}/reject', 200);
  expectDocumented(await t.request('DELETE', `/api/teams/members/${invitee.id}`, { token, headers: inTeam }), 'delete', '/api/teams/members/{id}', 200);
  const activity = await t.request('GET', '/api/teams/activity?limit=5', { token, headers: inTeam });
  expectDocumented(activity, 'get', '/api/teams/activity', 200);
  expect(activity.body.meta).toMatchObject({ limit: 5, hasNextPage: true });
  expectDocumented(await t.request('DELETE', `/api/teams/${team.body.id}`, { token }), 'delete', '/api/teams/{id}', 200);

  const key = await t.request('POST', '/api/api-keys', { token, body: { name: 'stats' } });
  expectDocumented(await t.request('GET', `/api/api-keys/${key.body.id}/stats`, { token }), 'get', '/api/api-keys/{id}/stats', 200);
  expectDocumented(await t.request('POST', `/api/api-keys/${key.body.id}/revoke`, { token }), 'post', '/api/api-keys/{id}/revoke', 200);
  expectDocumented(await t.request('PATCH', `/api/api-keys/${key.body.id}`, { token, body: { isActive: true } }), 'patch', '/api/api-keys/{id}', 200);

  const client = await t.request('POST', '/api/oauth/clients', { token, body: { name: 'docs', permissions: { read_documents: true } } });
  expectDocumented(client, 'post', '/api/oauth/clients', 201);
  expectDocumented(await t.request('GET', `/api/oauth/clients/${client.body.id}`, { token }), 'get', '/api/oauth/clients/{id}', 200);
  expectDocumented(await t.request('GET', '/api/oauth/clients', { token }), 'get', '/api/oauth/clients', 200);
  expectDocumented(await t.request('PATCH', `/api/oauth/clients/${client.body.id}`, { token, body: { isActive: false } }), 'patch', '/api/oauth/clients/{id}', 200);
  expectDocumented(await t.request('POST', `/api/oauth/clients/${client.body.id}/rotate-secret`, { token }), 'post', '/api/oauth/clients/{id}/rotate-secret', 200);
});

test('the profile picture and its requirements answer as documented', async () => {
  const user = await signUp(t);
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
  expectDocumented(await t.request('GET', '/api/users/me/avatar/requirements', { token: user.accessToken }), 'get', '/api/users/me/avatar/requirements', 200);
  expectDocumented(await t.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: png } }), 'post', '/api/users/me/avatar', 200);
  expectDocumented(await t.request('DELETE', '/api/users/me/avatar', { token: user.accessToken }), 'delete', '/api/users/me/avatar', 200);
});

test('API keys and webhook subscriptions answer as documented', async () => {
  const key = await t.request('POST', '/api/api-keys', { token: p.user.accessToken, body: { name: 'docs', permissions: { manage_webhooks: true, manage_gates: true } } });
  expectDocumented(key, 'post', '/api/api-keys', 201);
  expectDocumented(await t.request('GET', `/api/api-keys/${key.body.id}`, { token: p.user.accessToken }), 'get', '/api/api-keys/{id}', 200);
  expectDocumented(await t.request('GET', '/api/api-keys', { token: p.user.accessToken }), 'get', '/api/api-keys', 200);

  const sub = await t.request('POST', '/api/webhooks', { token: key.body.plainKey, body: { url: 'http://127.0.0.1:9/hooks/formwork', events: ['document.generated'] } });
  expectDocumented(sub, 'post', '/api/webhooks', 201);
  expectDocumented(await t.request('GET', `/api/webhooks/${sub.body.id}`, { token: key.body.plainKey }), 'get', '/api/webhooks/{id}', 200);
  expectDocumented(await t.request('GET', '/api/webhooks', { token: key.body.plainKey }), 'get', '/api/webhooks', 200);

  // A delivery refused by its receiver (400: failed at once), read, listed and sent again.
  const receiver = await startWebhookReceiver();
  try {
    receiver.respondWith([400], 204);
    const hooked = await t.request('POST', '/api/webhooks', { token: key.body.plainKey, body: { url: `${receiver.url}/hook`, events: ['document.failed'] } });
    const test = await t.request('POST', `/api/webhooks/${hooked.body.id}/test`, { token: key.body.plainKey });
    expectDocumented(test, 'post', '/api/webhooks/{id}/test', 201);
    const delivery = `/api/webhooks/deliveries/${test.body.deliveryId}`;
    const failed = await waitFor(async () => {
      const res = await t.request('GET', delivery, { token: key.body.plainKey });
      return res.body.status === 'failed' ? res : undefined;
    }, { what: 'the refused delivery' });
    expectDocumented(failed, 'get', '/api/webhooks/deliveries/{deliveryId}', 200);
    expectDocumented(await t.request('GET', `/api/webhooks/${hooked.body.id}/deliveries`, { token: key.body.plainKey }), 'get', '/api/webhooks/{id}/deliveries', 200);
    expectDocumented(await t.request('POST', `${delivery}/retry`, { token: key.body.plainKey }), 'post', '/api/webhooks/deliveries/{deliveryId}/retry', 200);
    const completed = await waitFor(async () => {
      const res = await t.request('GET', delivery, { token: key.body.plainKey });
      return res.body.status === 'completed' ? res : undefined;
    }, { what: 'the delivery sent again' });
    expectDocumented(completed, 'get', '/api/webhooks/deliveries/{deliveryId}', 200);
    expect(completed.body.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([400, 204]);
  } finally {
    await receiver.stop();
  }
});

test('document analytics and the quota answer as documented', async () => {
  const done = await t.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'Ada' } } });
  await waitForJob(t, p.apiKey, done.body.jobId);
  const analytics = await t.request('GET', '/api/documents/analytics', { token: p.apiKey });
  expectDocumented(analytics, 'get', '/api/documents/analytics', 200);
  expect(analytics.body.byTemplate.length).toBeGreaterThan(0);
  expect(analytics.body.byDate.length).toBeGreaterThan(0);
  expectDocumented(await t.request('GET', '/api/v1/documents/analytics', { token: p.apiKey }), 'get', '/api/v1/documents/analytics', 200);
  expectDocumented(await t.request('GET', '/api/documents/quota', { token: p.apiKey }), 'get', '/api/documents/quota', 200);
});

test('Flow gates and runs answer as documented', async () => {
  const token = p.user.accessToken;
  const gate = await t.request('POST', '/api/flow/gates', { token, body: { name: `Gate ${randomBytes(3).toString('hex')}`, schema: { type: 'object', properties: { customer: { type: 'string', required: true } } } } });
  expectDocumented(gate, 'post', '/api/flow/gates', 201);
  expectDocumented(await t.request('GET', `/api/flow/gates/${gate.body.id}`, { token }), 'get', '/api/flow/gates/{id}', 200);
  expectDocumented(await t.request('GET', '/api/flow/gates', { token }), 'get', '/api/flow/gates', 200);
  const run = await t.request('POST', `/api/flow/gates/${gate.body.id}/runs`, { token, body: { payload: { customer: 'Ada' } } });
  expectDocumented(run, 'post', '/api/flow/gates/{gateId}/runs', 201);
  expectDocumented(await t.request('GET', `/api/flow/runs/${run.body.id}`, { token }), 'get', '/api/flow/runs/{id}', 200);
  expectDocumented(await t.request('GET', '/api/flow/runs', { token }), 'get', '/api/flow/runs', 200);
});

test('Flow validation details, approvals, a run\'s approvals and deliveries, and a retry answer as documented', async () => {
  // A person of their own: the Free plan's three gates of the shared project are for the other tests.
  const me = await signUp(t, { verified: true });
  const token = me.accessToken;
  const receiver = await startWebhookReceiver();
  try {
    const gate = await t.request('POST', '/api/flow/gates', {
      token,
      body: {
        name: `Approved ${randomBytes(3).toString('hex')}`,
        schema: { type: 'object', properties: { customer: { type: 'string', required: true } } },
        businessRules: [{ id: 'named', expression: '$length(customer) > 1', message: 'Name the customer' }],
        approvalMode: 'manual',
        approvalConfig: { approvers: [{ email: me.email }], timeoutMinutes: 60, onTimeout: 'reject' },
        deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/flow`, secret: 'documented-secret' }],
      },
    });
    expect(gate.status).toBe(201);
    const invalid = await t.request('POST', `/api/flow/gates/${gate.body.id}/runs`, { token, body: { payload: { customer: 'A' } } });
    expectDocumented(invalid, 'post', '/api/flow/gates/{gateId}/runs', 201);
    expect(invalid.body.validation.steps.map((s: any) => s.status)).toEqual(['pass', 'fail']);
    const run = await t.request('POST', `/api/flow/gates/${gate.body.id}/runs`, { token, body: { payload: { customer: 'Ada' } } });
    await waitFor(async () => (await t.request('GET', `/api/flow/runs/${run.body.id}`, { token })).body.status === 'review_required' || undefined, { what: 'run in review' });
    expectDocumented(await t.request('POST', `/api/flow/approvals/resend/${run.body.id}`, { token }), 'post', '/api/flow/approvals/resend/{runId}', 200);
    const pending = await t.request('GET', '/api/flow/approvals', { token });
    expectDocumented(pending, 'get', '/api/flow/approvals', 200);
    expect(pending.body.data.length).toBe(1);
    receiver.respondWith([400], 204);
    expectDocumented(await t.request('POST', `/api/flow/approvals/${pending.body.data[0].id}/approve`, { token, body: { comment: 'Fine' } }), 'post', '/api/flow/approvals/{id}/approve', 200);
    expectDocumented(await t.request('GET', '/api/flow/approvals?status=decided', { token }), 'get', '/api/flow/approvals', 200);
    expectDocumented(await t.request('GET', `/api/flow/runs/${run.body.id}/approvals`, { token }), 'get', '/api/flow/runs/{id}/approvals', 200);
    await waitFor(async () => (await t.request('GET', `/api/flow/runs/${run.body.id}`, { token })).body.status === 'failed' || undefined, { what: 'delivery refused' });
    const deliveries = await t.request('GET', `/api/flow/runs/${run.body.id}/deliveries`, { token });
    expectDocumented(deliveries, 'get', '/api/flow/runs/{id}/deliveries', 200);
    expectDocumented(await t.request('POST', `/api/flow/deliveries/${deliveries.body.data[0].id}/retry`, { token }), 'post', '/api/flow/deliveries/{id}/retry', 200);
  } finally {
    await receiver.stop();
  }
});

test('a Flow gate\'s dry run, schema versions and import answer as documented (the dashboard\'s gate pages read them typed)', async () => {
  const token = p.user.accessToken;
  const schema = { type: 'object', properties: { customer: { type: 'string', required: true, minLength: 2 }, items: { type: 'array', items: { type: 'object', properties: { price: { type: 'number', min: 0 } } } } } };
  const businessRules = [{ id: 'ada', name: 'Only Ada', expression: "customer = 'Ada'", message: 'only Ada' }];
  const gate = await t.request('POST', '/api/flow/gates', { token, body: { name: `Gate ${randomBytes(3).toString('hex')}`, schema, businessRules, deliveryChannels: [{ type: 'webhook', url: 'https://example.com/hook', secret: 'a-long-secret', headers: { 'X-Api-Key': 'k' } }], renderMode: 'custom_api', renderConfig: { url: 'https://example.com/render', secret: 's' } } });
  expectDocumented(gate, 'post', '/api/flow/gates', 201);
  const passed = await t.request('POST', `/api/flow/gates/${gate.body.id}/test`, { token, body: { customer: 'Ada', items: [{ price: 1 }] } });
  expectDocumented(passed, 'post', '/api/flow/gates/{id}/test', 200);
  expect(passed.body).toMatchObject({ valid: true, layers: { schema: 'pass', business_rules: 'pass' }, failedLayer: null });
  const broke = await t.request('POST', `/api/flow/gates/${gate.body.id}/test`, { token, body: { customer: 'Bob' } });
  expectDocumented(broke, 'post', '/api/flow/gates/{id}/test', 200);
  expect(broke.body).toMatchObject({ valid: false, layers: { schema: 'pass', business_rules: 'fail' }, failedLayer: 'business_rules' });
  const misshapen = await t.request('POST', `/api/flow/gates/${gate.body.id}/test`, { token, body: { customer: 'A', items: [{ price: -1 }] } });
  expectDocumented(misshapen, 'post', '/api/flow/gates/{id}/test', 200);
  expect(misshapen.body).toMatchObject({ valid: false, layers: { schema: 'fail', business_rules: 'skipped' }, failedLayer: 'schema' });
  const template = await t.request('POST', '/api/templates', { token, body: buildTemplate() });
  expectDocumented(await t.request('POST', `/api/flow/gates/${gate.body.id}/import-schema`, { token, body: { templateId: template.body.id } }), 'post', '/api/flow/gates/{id}/import-schema', 200);
  expectDocumented(await t.request('GET', `/api/flow/gates/${gate.body.id}/versions`, { token }), 'get', '/api/flow/gates/{id}/versions', 200);
  const freetext = await t.request('POST', '/api/flow/gates', { token, body: { name: `Text ${randomBytes(3).toString('hex')}`, validationMode: 'freetext', freetextConfig: { minLength: 3, requiredPatterns: ['Order'] } } });
  expectDocumented(freetext, 'post', '/api/flow/gates', 201);
  expectDocumented(await t.request('GET', `/api/flow/gates/${freetext.body.id}/versions`, { token }), 'get', '/api/flow/gates/{id}/versions', 200);
});

test('report runs answer as documented, queued and completed', async () => {
  const token = p.user.accessToken;
  await t.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
  await t.services.db.query(`INSERT INTO ${table} VALUES (1, 'Apple')`);
  const datasource = await createTestDatasource(t, token, `Rows ${table}`);
  const query = await t.request('POST', '/api/reporting/queries', { token, body: { name: `Q ${table}`, datasourceId: datasource.id, text: `SELECT label FROM ${table}` } });
  expect((await t.request('POST', `/api/reporting/queries/${query.body.id}/publish`, { token, body: {} })).status).toBe(201);
  const report = await t.request('POST', '/api/reporting/reports', { token, body: { name: `R ${table}`, datasets: [{ name: 'items', queryId: query.body.id }], outputs: [{ format: 'csv' }] } });
  expect((await t.request('POST', `/api/reporting/reports/${report.body.id}/publish`, { token, body: {} })).status).toBe(201);

  const started = await t.request('POST', `/api/reporting/reports/${report.body.id}/runs`, { token, body: {} });
  expectDocumented(started, 'post', '/api/reporting/reports/{id}/runs', 201);
  const completed = await waitFor(
    async () => {
      const res = await t.request('GET', `/api/reporting/runs/${started.body.runId}`, { token });
      return res.body.status === 'completed' ? res : undefined;
    },
    { timeoutMs: 120_000, what: 'the report run to complete' },
  );
  expectDocumented(completed, 'get', '/api/reporting/runs/{id}', 200);
  expect(completed.body.outputs).toHaveLength(1);
  expectDocumented(await t.request('GET', '/api/reporting/runs', { token }), 'get', '/api/reporting/runs', 200);
});

test('reports, schedules, jobs, channels, deliveries and imports answer as documented (the dashboard reads them typed)', async () => {
  const token = p.user.accessToken;
  const rows = `${table}_more`;
  await t.services.db.query(`CREATE TABLE ${rows} (id integer PRIMARY KEY, label text)`);
  await t.services.db.query(`INSERT INTO ${rows} VALUES (1, 'Pear')`);
  const receiver = await startWebhookReceiver();
  try {
    const datasource = await createTestDatasource(t, token, `More ${rows}`);
    const query = await t.request('POST', '/api/reporting/queries', { token, body: { name: `Q ${rows}`, datasourceId: datasource.id, text: `SELECT label FROM ${rows}` } });
    expect((await t.request('POST', `/api/reporting/queries/${query.body.id}/publish`, { token, body: {} })).status).toBe(201);
    const report = await t.request('POST', '/api/reporting/reports', { token, body: { name: `R ${rows}`, datasets: [{ name: 'items', queryId: query.body.id }], outputs: [{ format: 'csv' }] } });
    expectDocumented(report, 'post', '/api/reporting/reports', 201);
    expectDocumented(await t.request('POST', `/api/reporting/reports/${report.body.id}/publish`, { token, body: {} }), 'post', '/api/reporting/reports/{id}/publish', 201);
    expectDocumented(await t.request('GET', `/api/reporting/reports/${report.body.id}`, { token }), 'get', '/api/reporting/reports/{id}', 200);
    expectDocumented(await t.request('PATCH', `/api/reporting/reports/${report.body.id}`, { token, body: { description: 'Rows' } }), 'patch', '/api/reporting/reports/{id}', 200);
    expectDocumented(await t.request('GET', '/api/reporting/reports', { token }), 'get', '/api/reporting/reports', 200);
    expectDocumented(await t.request('GET', `/api/reporting/reports/${report.body.id}/versions`, { token }), 'get', '/api/reporting/reports/{id}/versions', 200);

    const channel = await t.request('POST', '/api/reporting/channels', { token, body: { name: `Hook ${rows}`, kind: 'webhook', config: { url: `${receiver.url}/r`, headers: { 'X-Tenant': 'acme' } } } });
    expectDocumented(channel, 'post', '/api/reporting/channels', 201);
    expectDocumented(await t.request('GET', `/api/reporting/channels/${channel.body.id}`, { token }), 'get', '/api/reporting/channels/{id}', 200);
    expectDocumented(await t.request('POST', `/api/reporting/channels/${channel.body.id}/test`, { token, body: {} }), 'post', '/api/reporting/channels/{id}/test', 200);
    expectDocumented(await t.request('GET', '/api/reporting/channels', { token }), 'get', '/api/reporting/channels', 200);

    const check = await t.request('POST', '/api/reporting/schedules/validate', { token, body: { cron: '30 7 * * 1-5', timezone: 'Europe/Berlin' } });
    expectDocumented(check, 'post', '/api/reporting/schedules/validate', 200);
    expect(check.body.nextRunTimes).toHaveLength(5);
    expectDocumented(await t.request('POST', '/api/reporting/schedules/validate', { token, body: { cron: '0 7 * * 7', timezone: 'UTC' } }), 'post', '/api/reporting/schedules/validate', 200);
    const schedule = await t.request('POST', '/api/reporting/schedules', { token, body: { name: `S ${rows}`, target: { type: 'report', id: report.body.id }, cron: '30 7 * * 1-5', timezone: 'Europe/Berlin', channelIds: [channel.body.id] } });
    expectDocumented(schedule, 'post', '/api/reporting/schedules', 201);
    expectDocumented(await t.request('GET', `/api/reporting/schedules/${schedule.body.id}`, { token }), 'get', '/api/reporting/schedules/{id}', 200);
    expectDocumented(await t.request('GET', '/api/reporting/schedules', { token }), 'get', '/api/reporting/schedules', 200);
    const triggered = await t.request('POST', `/api/reporting/schedules/${schedule.body.id}/trigger`, { token });
    expectDocumented(triggered, 'post', '/api/reporting/schedules/{id}/trigger', 201);
    const delivered = await waitFor(
      async () => {
        const res = await t.request('GET', `/api/reporting/runs/${triggered.body.runId}/deliveries`, { token });
        return res.body.data?.[0]?.status === 'completed' ? res : undefined;
      },
      { timeoutMs: 120_000, what: 'the scheduled run delivered' },
    );
    expectDocumented(delivered, 'get', '/api/reporting/runs/{id}/deliveries', 200);
    expectDocumented(await t.request('POST', `/api/reporting/schedules/${schedule.body.id}/pause`, { token, body: {} }), 'post', '/api/reporting/schedules/{id}/pause', 200);

    const job = await t.request('POST', '/api/reporting/jobs', { token, body: { name: `J ${rows}`, items: [{ reportId: report.body.id }] } });
    expectDocumented(job, 'post', '/api/reporting/jobs', 201);
    expectDocumented(await t.request('GET', '/api/reporting/jobs', { token }), 'get', '/api/reporting/jobs', 200);
    const jobRun = await t.request('POST', `/api/reporting/jobs/${job.body.id}/runs`, { token, body: {} });
    expectDocumented(jobRun, 'post', '/api/reporting/jobs/{id}/runs', 201);
    expectDocumented(await t.request('GET', `/api/reporting/job-runs/${jobRun.body.jobRunId}`, { token }), 'get', '/api/reporting/job-runs/{id}', 200);
    expectDocumented(await t.request('GET', '/api/reporting/job-runs', { token }), 'get', '/api/reporting/job-runs', 200);

    const cards = JSON.stringify([{ id: 1, name: `Card ${rows}`, dataset_query: { type: 'native', database: 2, native: { query: 'SELECT 1 AS one', 'template-tags': {} } } }]);
    const form = new FormData();
    form.append('file', new Blob([cards]), 'cards.json');
    form.append('datasourceId', datasource.id);
    const answer = await fetch(`${t.url}/api/reporting/imports`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const imported = { status: answer.status, body: (await answer.json()) as Record<string, any> };
    expect(imported.status).toBe(201);
    expect(validatorOf('post', '/api/reporting/imports', 201)(imported.body)).toEqual({ valid: true, errors: null });
    expectDocumented(await t.request('GET', `/api/reporting/imports/${imported.body.id}`, { token }), 'get', '/api/reporting/imports/{id}', 200);
    expectDocumented(await t.request('GET', '/api/reporting/imports', { token }), 'get', '/api/reporting/imports', 200);
  } finally {
    await receiver.stop();
    await t.services.db.query(`DROP TABLE IF EXISTS ${rows}`);
  }
});

test('the twelve Flow analytics answers are as documented (the dashboard reads them typed)', async () => {
  // A person of their own: the Free plan's three gates of the shared project are for the other tests.
  const token = (await signUp(t, { verified: true })).accessToken;
  const gate = await t.request('POST', '/api/flow/gates', { token, body: { name: `Analytics ${randomBytes(3).toString('hex')}`, schema: { type: 'object', properties: { customer: { type: 'string', required: true } } } } });
  expect(gate.status).toBe(201);
  expect((await t.request('POST', `/api/flow/gates/${gate.body.id}/runs`, { token, body: { payload: { customer: 'Ada' } } })).body.status).toBe('completed');
  expect((await t.request('POST', `/api/flow/gates/${gate.body.id}/runs`, { token, body: { payload: {} } })).body.status).toBe('validation_failed');
  const views = ['overview', 'run-outcomes', 'throughput', 'validation-errors', 'approval-metrics', 'infra-health', 'gate-metrics', 'billing-summary', 'combined-timeline', 'team-overview', 'plans', 'credit-packs'];
  for (const view of views) {
    const query = ['billing-summary', 'plans', 'credit-packs'].includes(view) ? '' : view === 'team-overview' ? '?period=7d' : `?period=7d${['throughput', 'combined-timeline'].includes(view) ? '&granularity=week' : `&gateId=${gate.body.id}`}`;
    expectDocumented(await t.request('GET', `/api/flow/analytics/${view}${query}`, { token }), 'get', `/api/flow/analytics/${view}`, 200);
  }
  const errors = await t.request('GET', '/api/flow/analytics/validation-errors', { token });
  expect(errors.body.byField).toEqual([{ field: 'customer', count: 1 }]);
  expectDocumented(errors, 'get', '/api/flow/analytics/validation-errors', 200);
  const gates = await t.request('GET', '/api/flow/analytics/gate-metrics', { token });
  expect(gates.body.gates.length).toBeGreaterThan(0);
  expectDocumented(gates, 'get', '/api/flow/analytics/gate-metrics', 200);
  // The check has teeth here too: an undocumented field fails it.
  expect(validatorOf('get', '/api/flow/analytics/overview', 200)({ ...(await t.request('GET', '/api/flow/analytics/overview', { token })).body, extra: 1 }).valid).toBe(false);
});
