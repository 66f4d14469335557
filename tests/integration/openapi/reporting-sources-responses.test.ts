import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { testDatabaseConfig } from '../../support/reporting';
import { documentedAnswers, type DocumentedAnswers } from '../../support/openapi-answers';

/**
 * Real answers of reporting's sources against the document's response schemas
 * (api/reporting/sources.resources.ts): datasources (create, list, get, test, health, schema),
 * query objects (create, list, get, check, preview, publish, versions) and agents (create, list, get,
 * new token), each validated with ajv; the objects allow no undocumented field.
 */
let t: TestApp;
let user: SignedUpUser;
let validatorOf: DocumentedAnswers['validatorOf'];
let expectDocumented: DocumentedAnswers['expectDocumented'];
const table = `openapi_sources_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  t = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  user = await signUp(t, { verified: true });
  await t.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text, amount numeric(8,2))`);
  await t.services.db.query(`INSERT INTO ${table} VALUES (1, 'a', 1.50), (2, 'b', 2.25)`);
  ({ validatorOf, expectDocumented } = await documentedAnswers(t));
});
afterAll(async () => {
  await t?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
  await t?.close();
});

test('datasources answer as documented', async () => {
  const token = user.accessToken;
  const body = { name: `Docs ${table}`, kind: 'postgres', config: testDatabaseConfig(t), secrets: { password: 'unused' } };
  expectDocumented(await t.request('POST', '/api/reporting/datasources/test', { token, body }), 'post', '/api/reporting/datasources/test', 200);
  const created = await t.request('POST', '/api/reporting/datasources', { token, body });
  expectDocumented(created, 'post', '/api/reporting/datasources', 201);
  const id = created.body.id as string;
  expect(validatorOf('get', '/api/reporting/datasources/{id}', 200)({ ...created.body, undocumented: 1 }).valid).toBe(false);
  expectDocumented(await t.request('GET', `/api/reporting/datasources/${id}/health`, { token }), 'get', '/api/reporting/datasources/{id}/health', 200);
  expectDocumented(await t.request('POST', `/api/reporting/datasources/${id}/test`, { token, body: {} }), 'post', '/api/reporting/datasources/{id}/test', 200);
  expectDocumented(await t.request('GET', `/api/reporting/datasources/${id}`, { token }), 'get', '/api/reporting/datasources/{id}', 200);
  expectDocumented(await t.request('GET', '/api/reporting/datasources', { token }), 'get', '/api/reporting/datasources', 200);
  expectDocumented(await t.request('PATCH', `/api/reporting/datasources/${id}`, { token, body: { description: 'Docs' } }), 'patch', '/api/reporting/datasources/{id}', 200);
  expectDocumented(await t.request('POST', `/api/reporting/datasources/${id}/schema/refresh`, { token, body: {} }), 'post', '/api/reporting/datasources/{id}/schema/refresh', 200);
  expectDocumented(await t.request('GET', `/api/reporting/datasources/${id}/schema?search=${table}`, { token }), 'get', '/api/reporting/datasources/{id}/schema', 200);

  // Query objects on it.
  const query = await t.request('POST', '/api/reporting/queries', { token, body: { name: `Q ${table}`, datasourceId: id, text: `SELECT id, label, amount FROM ${table} WHERE amount >= {{ min }} ORDER BY id`, parameters: [{ name: 'min', type: 'number', default: 0 }] } });
  expectDocumented(query, 'post', '/api/reporting/queries', 201);
  const q = query.body.id as string;
  expectDocumented(await t.request('POST', '/api/reporting/queries/validate', { token, body: { datasourceId: id, text: 'SELECT 1; DELETE FROM x' } }), 'post', '/api/reporting/queries/validate', 200);
  expectDocumented(await t.request('POST', '/api/reporting/queries/validate', { token, body: { datasourceId: id, text: 'SELECT {{ n }}', parameters: [{ name: 'n', type: 'integer', default: 2 }] } }), 'post', '/api/reporting/queries/validate', 200);
  expectDocumented(await t.request('GET', '/api/reporting/queries', { token }), 'get', '/api/reporting/queries', 200);
  expectDocumented(await t.request('PATCH', `/api/reporting/queries/${q}`, { token, body: { description: 'Docs' } }), 'patch', '/api/reporting/queries/{id}', 200);
  const preview = await t.request('POST', `/api/reporting/queries/${q}/preview`, { token, body: { parameters: { min: 2 } } });
  expectDocumented(preview, 'post', '/api/reporting/queries/{id}/preview', 200);
  expect(preview.body.rows).toEqual([{ id: 2, label: 'b', amount: '2.25' }]);
  expectDocumented(await t.request('POST', `/api/reporting/queries/${q}/publish`, { token, body: { releaseNotes: 'One' } }), 'post', '/api/reporting/queries/{id}/publish', 201);
  expectDocumented(await t.request('GET', `/api/reporting/queries/${q}`, { token }), 'get', '/api/reporting/queries/{id}', 200);
  expectDocumented(await t.request('GET', `/api/reporting/queries/${q}/versions`, { token }), 'get', '/api/reporting/queries/{id}/versions', 200);
  expectDocumented(await t.request('GET', `/api/reporting/queries/${q}/versions/1`, { token }), 'get', '/api/reporting/queries/{id}/versions/{version}', 200);
});

test('agents answer as documented, the token only when made', async () => {
  const token = user.accessToken;
  const created = await t.request('POST', '/api/agents', { token, body: { name: `Agent ${table}` } });
  expectDocumented(created, 'post', '/api/agents', 201);
  expect(validatorOf('get', '/api/agents/{id}', 200)(created.body).valid).toBe(false);
  expectDocumented(await t.request('GET', '/api/agents', { token }), 'get', '/api/agents', 200);
  expectDocumented(await t.request('GET', `/api/agents/${created.body.id}`, { token }), 'get', '/api/agents/{id}', 200);
  expectDocumented(await t.request('PATCH', `/api/agents/${created.body.id}`, { token, body: { description: 'Docs' } }), 'patch', '/api/agents/{id}', 200);
  expectDocumented(await t.request('POST', `/api/agents/${created.body.id}/rotate-token`, { token }), 'post', '/api/agents/{id}/rotate-token', 200);
});
