import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createFormworkClient } from '../../../clients/ts/index';
import { startTestApp, type TestApp } from '../../support/app';

/**
 * The typed client in clients/ts: its committed types are what the current operation tables
 * generate (CI fails on drift), and it works against the running API with typed calls.
 * The generator runs from dist/ (`npx tsc -p tsconfig.json` first), as `npm run client:generate` does.
 */
const run = promisify(execFile);
/** api/openapi/client-types.ts writes it (not imported here: openapi-typescript needs Node's own require of ES modules). */
const CLIENT_SCHEMA_FILE = 'clients/ts/schema.d.ts';
const root = resolve(__dirname, '../../..');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ worker: false, smtp: false });
});
afterAll(async () => {
  await t?.close();
});

test('the committed client types are what the operation tables generate', async () => {
  const { stdout } = await run(process.execPath, [join(root, 'dist/api/openapi/client-types.js'), '--stdout'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const committed = await readFile(join(root, CLIENT_SCHEMA_FILE), 'utf8');
  if (stdout !== committed) throw new Error(`${CLIENT_SCHEMA_FILE} is out of date with the OpenAPI operations: run \`npm run client:generate\` and commit the result`);
  expect(stdout).toContain('export interface paths');
});

test('the client signs up, reads the user and lists runs with an API key', async () => {
  const anonymous = createFormworkClient(t.url);
  const health = await anonymous.GET('/api/health');
  expect(health.response.status).toBe(200);
  expect(health.data?.status).toBe('ok');

  const signup = await anonymous.POST('/api/auth/signup', { body: { email: 'client@example.com', password: 'a long passphrase 7', name: 'Client' } });
  expect(signup.error).toBeUndefined();
  const session = signup.data!;
  expect(session.user.email).toBe('client@example.com');

  const asUser = createFormworkClient(t.url, session.accessToken);
  const me = await asUser.GET('/api/users/me');
  expect(me.data?.name).toBe('Client');

  // Creating keys takes a verified address; the e-mailed link is another test's subject.
  await t.services.db.query('UPDATE users SET email_verified_at = now() WHERE id = $1', [session.user.id]);
  const created = await asUser.POST('/api/api-keys', { body: { name: 'client test', permissions: { read_documents: true } } });
  expect(created.response.status).toBe(201);
  const key = created.data!.plainKey;
  expect(key).toMatch(/^fm_/);

  const asKey = createFormworkClient(t.url, key);
  const runs = await asKey.GET('/api/flow/runs', { params: { query: { limit: 5, source: 'rest' } } });
  expect(runs.response.status).toBe(200);
  expect(runs.data?.data).toEqual([]);

  // An error comes back typed as the document's error body.
  const refused = await asKey.GET('/api/flow/runs', { params: { query: { limit: 500 } } });
  expect(refused.response.status).toBe(400);
  expect(refused.error).toMatchObject({ statusCode: 400, code: expect.stringMatching(/^ERR_/), path: '/api/flow/runs' });
});
