import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember, createTeam, inTeam } from '../../support/teams';
import { buildTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * Multipart bodies (docs/security.md, "Uploads, output and mail"): parsed only by the file routes,
 * after authentication and the permission check, within UPLOAD_MAX_BYTES / UPLOAD_FIELDS_MAX_BYTES,
 * and every upload's temp file is gone when its request ends.
 */
describe('Uploads: multipart only where files are taken, bounded, and cleaned up', () => {
  const MAX_FILE = 8 * 1024;
  const MAX_FIELDS = 2 * 1024;
  let app: TestApp;
  let uploadDir: string;
  let alice: SignedUpUser;
  beforeAll(async () => {
    uploadDir = await mkdtemp(join(tmpdir(), 'formwork-uploads-test-'));
    app = await startTestApp({ env: { UPLOAD_TMP_DIR: uploadDir, UPLOAD_MAX_BYTES: String(MAX_FILE), UPLOAD_FIELDS_MAX_BYTES: String(MAX_FIELDS) } });
    alice = await signUp(app, { verified: true });
  });
  afterAll(async () => {
    await app.close();
    await rm(uploadDir, { recursive: true, force: true });
  });

  async function upload(path: string, opts: { token?: string; file?: string; fields?: Record<string, string>; headers?: Record<string, string>; method?: string } = {}) {
    const form = new FormData();
    if (opts.file !== undefined) form.append('file', new Blob([opts.file], { type: 'application/json' }), 'template.json');
    for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const res = await fetch(app.url + path, { method: opts.method ?? 'POST', headers, body: form });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
  }

  const leftInUploadDir = () => readdir(uploadDir);

  it('imports a file within the limit, and leaves nothing in the upload directory', async () => {
    const res = await upload('/api/templates/import', { token: alice.accessToken, file: JSON.stringify(buildTemplate({ name: 'Uploaded' })) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'created' });
    expect(await leftInUploadDir()).toEqual([]);
  });

  it('refuses a file over UPLOAD_MAX_BYTES and fields over UPLOAD_FIELDS_MAX_BYTES with 413 ERR_REQ_002', async () => {
    const big = JSON.stringify({ ...buildTemplate({ name: 'Too big' }), description: 'x'.repeat(MAX_FILE) });
    const overFile = await upload('/api/templates/import', { token: alice.accessToken, file: big });
    expect(overFile.status).toBe(413);
    expect(overFile.body).toMatchObject({ statusCode: 413, code: 'ERR_REQ_002' });

    const overFields = await upload('/api/templates/import', {
      token: alice.accessToken,
      file: JSON.stringify(buildTemplate({ name: 'Fat fields' })),
      fields: { duplicateHandling: 'rename', padding: 'p'.repeat(MAX_FIELDS + 1) },
    });
    expect(overFields.status).toBe(413);
    expect(overFields.body.code).toBe('ERR_REQ_002');
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM templates WHERE name IN ('Too big', 'Fat fields')`);
    expect(n).toBe(0);
    expect(await leftInUploadDir()).toEqual([]);
  });

  it('authenticates and checks the role before reading the upload: an oversized anonymous or viewer upload is 401/403, not 413', async () => {
    const big = 'x'.repeat(MAX_FILE * 4);
    const anonymous = await upload('/api/templates/import', { file: big });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('ERR_AUTH_003');

    const team = await createTeam(app, alice);
    const viewer = await addMember(app, alice, team.id, 'viewer');
    const refused = await upload('/api/templates/import', { token: viewer.accessToken, headers: inTeam(team.id), file: big });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ERR_AUTH_005');
    expect(await leftInUploadDir()).toEqual([]);
  });

  it('does not parse multipart bodies on routes that take no files', async () => {
    const before = (await app.request('GET', '/api/users/me', { token: alice.accessToken })).body.name;
    const res = await upload('/api/users/me', { token: alice.accessToken, method: 'PATCH', fields: { name: 'Renamed By Form' } });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: 'ERR_REQ_007', relatedInfo: { field: 'Content-Type', received: 'multipart/form-data', accepted: ['application/json'] } });
    expect((await app.request('GET', '/api/users/me', { token: alice.accessToken })).body.name).toBe(before);

    const created = await upload('/api/teams', { token: alice.accessToken, fields: { name: 'Form Team' } });
    expect(created.status).toBe(415);
    expect(created.body).toMatchObject({ code: 'ERR_REQ_007', relatedInfo: { field: 'Content-Type' } });
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM projects WHERE name = 'Form Team'`);
    expect(n).toBe(0);
  });

  it('deletes the temp file of a route that fails, and of an upload cut off half-way (hostile client)', async () => {
    const notJson = await upload('/api/templates/import', { token: alice.accessToken, file: 'name: not json' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe('ERR_TMPL_016');
    expect(await leftInUploadDir()).toEqual([]);

    // A client that promises 6 KB, sends part of the file and hangs up.
    const boundary = '----formwork-cut-off';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="t.json"\r\nContent-Type: application/json\r\n\r\n`;
    const url = new URL(app.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        path: '/api/templates/import',
        method: 'POST',
        headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(6 * 1024) },
      });
      req.on('error', () => resolve());
      req.on('response', (res) => {
        res.resume();
        resolve();
      });
      req.write(head + '{"name": "half'.padEnd(3000, 'y'));
      // Seen by the server once it has begun writing the file; then the client goes away.
      void waitFor(async () => (await leftInUploadDir()).length > 0, { what: 'the upload to begin' })
        .catch(() => undefined)
        .then(() => {
          req.destroy();
          resolve();
        });
    });
    await waitFor(async () => (await leftInUploadDir()).length === 0, { what: 'the cut-off upload to be deleted' });
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM templates WHERE name LIKE 'half%'`);
    expect(n).toBe(0);
  });
});
