import { execFile } from 'node:child_process';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GateEntity } from '../../../db/flow/gate.entity';
import { reencryptStoredSecrets, SECRET_COLUMNS } from '../../../db/secrets-at-rest';
import { loadConfig } from '../../../domain/config';
import { activeKeyring, createKeyring, decodeKey, keyId, SEALED_PREFIX, unseal } from '../../../domain/secret-box';
import { createServices } from '../../../platform/services';
import { startTestApp, type TestApp } from '../../support/app';
import { findInDatabase } from '../../support/api-keys';
import { setupDocumentProject } from '../../support/documents';
import { makeCertificates } from '../../support/signing';
import { signUp, type SignedUpUser } from '../../support/factories';
import { flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { totp } from '../../support/totp';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';
import { sendTest, subscribe } from '../webhooks/helpers';

/**
 * docs/security.md, "Credentials: secrets at rest": TOTP seeds, webhook and channel secrets,
 * channel header values and `renderConfig.secret` are AES-256-GCM ciphertext in the database,
 * write-only in the API, and survive a key rotation; backup codes are salted hashes.
 */

const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('base64');
const ID_A = keyId(decodeKey(KEY_A)!);
const ID_B = keyId(decodeKey(KEY_B)!);

const RENDER_SECRET = 'render_secret_Qx7Lw2';
const CHANNEL_SECRET = 'channel_secret_Pz4Kv9';
const HEADER_VALUE = 'Bearer header_token_Mn3Jr8';
const PDF_BODY = '%PDF-1.4\n% rendered by a custom render API\n%%EOF\n';

/** What a receiver does (docs/webhooks.md): HMAC-SHA256 over `<timestamp>.<raw body>`. */
function signedWith(req: ReceivedRequest, secret: string): boolean {
  const expected = 'v1=' + createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.${req.rawBody}`).digest('hex');
  return req.headers['x-service-signature'] === expected;
}

const execFileAsync = promisify(execFile);

describe('secrets at rest', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800', ENCRYPTION_KEY: KEY_A } });
    ws = await flowWorkspace(app, 'growth');
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
  });

  const db = () => app.services.db;
  const login = (user: SignedUpUser, code: string) => app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password, code } });
  const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);
  const waitForRequestTo = (path: string, count: number) =>
    waitFor(() => (requestsTo(path).length >= count ? requestsTo(path)[count - 1] : undefined), { timeoutMs: 30_000, what: `request ${count} to ${path}` });

  async function enableTwoFactor(user: SignedUpUser): Promise<{ secret: string; backupCodes: string[] }> {
    const res = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    expect(res.status).toBe(200);
    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(res.body.secret) } });
    expect(verify.status).toBe(200);
    return res.body;
  }

  async function submitAndFinish(gateId: string, payload: unknown): Promise<any> {
    const res = await app.request('POST', `/api/flow/gates/${gateId}/runs`, { token: ws.key, body: { payload } });
    expect(res.status).toBe(201);
    return waitFor(
      async () => {
        const run = (await app.request('GET', `/api/flow/runs/${res.body.id}`, { token: ws.key })).body;
        return ['completed', 'failed'].includes(run.status) ? run : undefined;
      },
      { timeoutMs: 30_000, what: 'run to finish' },
    );
  }

  /** Every stored value of every secret column, as text. */
  async function storedSecretTexts(): Promise<string[]> {
    const texts: string[] = [];
    for (const { table, column } of SECRET_COLUMNS) {
      const rows: Array<{ v: string }> = await db().query(`SELECT ${column}::text AS v FROM ${table} WHERE ${column} IS NOT NULL`);
      texts.push(...rows.map((r) => r.v));
    }
    return texts;
  }

  let subscription: { id: string; secret: string };
  let gateId: string;

  it('TOTP seeds are ciphertext in the database; setup and login with the app code still work', async () => {
    const twoFactorUser = await signUp(app);
    const { secret } = await enableTwoFactor(twoFactorUser);
    const [row] = await db().query(`SELECT two_factor_secret FROM users WHERE id = $1`, [twoFactorUser.id]);
    expect(row.two_factor_secret.startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);
    expect(await findInDatabase(db(), secret)).toEqual([]);

    const ok = await login(twoFactorUser, totp(secret, Date.now() + 30_000));
    expect(ok.status).toBe(200);
    expect(ok.body.accessToken).toEqual(expect.any(String));
    const wrong = await login(twoFactorUser, totp(secret, Date.now() + 10 * 60_000));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('ERR_AUTH_012');
  });

  it('backup codes are stored as salted hashes; a code signs in once; an unsalted hash from before still works', async () => {
    const user = await signUp(app);
    const { backupCodes } = await enableTwoFactor(user);
    const rows: Array<{ code_hash: string }> = await db().query(`SELECT code_hash FROM backup_codes WHERE user_id = $1`, [user.id]);
    expect(rows).toHaveLength(10);
    for (const { code_hash } of rows) {
      expect(code_hash).toMatch(/^s1:[\w-]+:[0-9a-f]{64}$/);
      // Not the unsalted hash either: a table of precomputed hashes matches nothing.
      for (const code of backupCodes) expect(code_hash).not.toContain(createHash('sha256').update(`backup-code:${code.replace('-', '')}`).digest('hex'));
    }
    expect(new Set(rows.map((r) => r.code_hash.split(':')[1])).size).toBe(10);

    expect((await login(user, backupCodes[3])).status).toBe(200);
    const again = await login(user, backupCodes[3]);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('ERR_AUTH_012');
    expect((await login(user, "' OR code_hash LIKE '%")).status).toBe(401);

    const legacyCode = 'abcde-fghjk';
    const legacyId = randomUUID();
    await db().query(`INSERT INTO backup_codes (id, user_id, code_hash, used_at, created_at) VALUES ($1, $2, $3, NULL, now())`, [
      legacyId,
      user.id,
      createHash('sha256').update('backup-code:abcdefghjk').digest('hex'),
    ]);
    expect((await login(user, legacyCode.toUpperCase())).status).toBe(200);
    const [used] = await db().query(`SELECT used_at FROM backup_codes WHERE id = $1`, [legacyId]);
    expect(used.used_at).not.toBeNull();
    expect((await login(user, legacyCode)).status).toBe(401);
  });

  it('webhook signing secrets are ciphertext in the database; deliveries are still signed with them', async () => {
    const sub = await subscribe(app, ws.user.accessToken, { url: `${receiver.url}/document-hook` });
    subscription = { id: sub.id, secret: sub.secret };
    expect(sub.secret).toMatch(/^whsec_/);
    const [row] = await db().query(`SELECT secret FROM webhook_subscriptions WHERE id = $1`, [sub.id]);
    expect(row.secret.startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);
    expect(await findInDatabase(db(), sub.secret)).toEqual([]);
    // Listed and read: never the secret.
    const read = await app.request('GET', `/api/webhooks/${sub.id}`, { token: ws.user.accessToken });
    expect(read.status).toBe(200);
    expect(read.text).not.toContain(sub.secret);

    await sendTest(app, ws.user.accessToken, sub.id);
    const req = await waitForRequestTo('/document-hook', 1);
    expect(signedWith(req, sub.secret)).toBe(true);
  });

  it('gate secrets are ciphertext at rest and write-only: responses show {"set": true}; an update without them keeps them', async () => {
    const created = await app.request('POST', '/api/flow/gates', {
      token: ws.key,
      body: {
        name: 'Secret keeper',
        renderMode: 'custom_api',
        renderConfig: { url: `${receiver.url}/render`, secret: RENDER_SECRET, format: 'pdf' },
        deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/deliver`, secret: CHANNEL_SECRET, headers: { 'X-Api-Key': HEADER_VALUE, 'X-Tenant': 'acme' } }],
      },
    });
    expect(created.status).toBe(201);
    gateId = created.body.id;
    const masked = {
      renderConfig: { url: `${receiver.url}/render`, secret: { set: true }, format: 'pdf' },
      deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/deliver`, secret: { set: true }, headers: { 'X-Api-Key': { set: true }, 'X-Tenant': { set: true } } }],
    };
    expect(created.body).toMatchObject(masked);
    const got = await app.request('GET', `/api/flow/gates/${gateId}`, { token: ws.key });
    expect(got.body).toMatchObject(masked);
    const list = await app.request('GET', '/api/flow/gates', { token: ws.key });
    expect(list.body.data.find((g: any) => g.id === gateId)).toMatchObject(masked);
    for (const res of [created, got, list]) {
      for (const secret of [RENDER_SECRET, CHANNEL_SECRET, HEADER_VALUE, RENDER_SECRET.slice(-4), CHANNEL_SECRET.slice(0, 4)]) expect(res.text).not.toContain(secret);
    }
    for (const secret of [RENDER_SECRET, CHANNEL_SECRET, HEADER_VALUE]) expect(await findInDatabase(db(), secret)).toEqual([]);
    const [row] = await db().query(`SELECT render_config, delivery_channels FROM flow_gates WHERE id = $1`, [gateId]);
    expect(row.render_config.secret.startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);
    expect(row.delivery_channels[0].secret.startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);
    expect(row.delivery_channels[0].headers['X-Api-Key'].startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);

    // The dashboard round trip: what GET showed goes back with one change; renderConfig without its secret.
    const updated = await app.request('PUT', `/api/flow/gates/${gateId}`, {
      token: ws.key,
      body: { name: 'Secret keeper renamed', renderConfig: { url: `${receiver.url}/render`, format: 'pdf' }, deliveryChannels: got.body.deliveryChannels },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Secret keeper renamed', ...masked });
    const stored = await db().getRepository(GateEntity).findOneByOrFail({ id: gateId });
    expect(stored.renderConfig).toEqual({ url: `${receiver.url}/render`, secret: RENDER_SECRET, format: 'pdf' });
    expect(stored.deliveryChannels).toEqual([{ type: 'webhook', url: `${receiver.url}/deliver`, secret: CHANNEL_SECRET, headers: { 'X-Api-Key': HEADER_VALUE, 'X-Tenant': 'acme' } }]);

    // A run signs the render call and the delivery with the kept secrets and sends the kept header.
    receiver.respondWith([{ status: 200, body: PDF_BODY, headers: { 'content-type': 'application/pdf' } }], 200);
    const run = await submitAndFinish(gateId, { customer: 'Ada' });
    expect(run.status).toBe('completed');
    const render = await waitForRequestTo('/render', 1);
    expect(signedWith(render, RENDER_SECRET)).toBe(true);
    const delivery = await waitForRequestTo('/deliver', 1);
    expect(signedWith(delivery, CHANNEL_SECRET)).toBe(true);
    expect(delivery.headers['x-api-key']).toBe(HEADER_VALUE);
    // The delivery record keeps the channel's secret and headers encrypted too.
    for (const secret of [CHANNEL_SECRET, HEADER_VALUE]) expect(await findInDatabase(db(), secret)).toEqual([]);
    const [deliveryRow] = await db().query(`SELECT secret, headers FROM webhook_deliveries WHERE run_id = $1`, [run.id]);
    expect(deliveryRow.secret.startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);
    expect(deliveryRow.headers['X-Api-Key'].startsWith(`${SEALED_PREFIX}${ID_A}:`)).toBe(true);
  });

  it('refuses write-only markers with nothing stored behind them, and other malformed secrets (400)', async () => {
    const put = (body: Record<string, unknown>) => app.request('PUT', `/api/flow/gates/${gateId}`, { token: ws.key, body });
    const newChannel = await put({ deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/other`, secret: { set: true } }] });
    expect(newChannel.status).toBe(400);
    expect(newChannel.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'deliveryChannels[0].secret' } });
    const noSecret = await put({ deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/other` }] });
    expect(noSecret.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'deliveryChannels[0].secret' } });
    const unknownHeader = await put({ deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/deliver`, headers: { 'X-Other': { set: true } } }] });
    expect(unknownHeader.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'deliveryChannels[0].headers.X-Other' } });
    for (const secret of [{ set: false }, { set: true, value: 'x' }, 123, ['a'], { $gt: '' }]) {
      const bad = await put({ renderConfig: { url: `${receiver.url}/render`, secret } });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('ERR_VALID_001');
    }
    const created = await app.request('POST', '/api/flow/gates', { token: ws.key, body: { name: 'No render secret', renderConfig: { url: `${receiver.url}/r`, secret: { set: true } } } });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'renderConfig.secret' } });
    // None of the refused requests changed what is stored.
    const stored = await db().getRepository(GateEntity).findOneByOrFail({ id: gateId });
    expect(stored.renderConfig?.secret).toBe(RENDER_SECRET);
    expect(stored.deliveryChannels[0].secret).toBe(CHANNEL_SECRET);

    // `secret: null` removes the render secret; the response then has none.
    const removed = await put({ renderConfig: { url: `${receiver.url}/render`, secret: null } });
    expect(removed.status).toBe(200);
    expect(removed.body.renderConfig).toEqual({ url: `${receiver.url}/render` });
    const put2 = await put({ renderConfig: { url: `${receiver.url}/render`, secret: RENDER_SECRET, format: 'pdf' } });
    expect(put2.body.renderConfig.secret).toEqual({ set: true });
  });

  it('npm run admin -- rotate-encryption-key re-encrypts every stored secret under the new key; everything stays readable', async () => {
    const user = await signUp(app);
    const { secret: seed } = await enableTwoFactor(user);
    // A stored Idempotency-Key answer (docs/idempotency.md), the newest secret column.
    const keyed = await app.request('POST', '/api/flow/gates', { token: ws.key, headers: { 'Idempotency-Key': 'rotation-check' }, body: { name: 'Idempotent gate' } });
    expect(keyed.status).toBe(201);
    // An http_json datasource's header value (`reporting_datasources.config`, docs/security.md "Reporting datasources: secrets tied to their target").
    const headers = await app.request('POST', '/api/reporting/datasources', {
      token: (await signUp(app)).accessToken,
      body: { name: 'Header source', kind: 'http_json', config: { baseUrl: 'https://api.example.com', defaultHeaders: { 'X-Api-Key': 'rotation-header-value' } } },
    });
    expect(headers.status).toBe(201);
    // A webhook channel's header value (`reporting_channels.config`, docs/security.md "Reporting channels: verified senders, budgets, header secrets").
    const channel = await app.request('POST', '/api/reporting/channels', {
      token: (await signUp(app)).accessToken,
      body: { name: 'Header hook', kind: 'webhook', config: { url: 'http://127.0.0.1:9/erp', headers: { Authorization: 'Bearer rotation-channel-value' } } },
    });
    expect([channel.status, channel.body.relatedInfo ?? null]).toEqual([201, null]);
    // A generation's encryption passwords (`document_jobs.output`, docs/documents.md "Output options").
    const docs = await setupDocumentProject(app);
    const encrypted = await app.request('POST', '/api/documents/generate', {
      token: docs.apiKey,
      body: { templateId: docs.templateId, format: 'pdf', variables: { customer: 'Rotation', items: [] }, output: { encryption: { ownerPassword: 'rotation-owner', userPassword: 'rotation-user' } } },
    });
    expect(encrypted.status).toBe(201);
    expect(encrypted.body).not.toHaveProperty('output');
    const [jobRow] = await db().query(`SELECT output FROM document_jobs WHERE id = $1`, [encrypted.body.jobId]);
    expect(JSON.stringify(jobRow.output)).not.toContain('rotation-owner');
    expect(JSON.stringify(jobRow.output)).not.toContain('rotation-user');
    // A batch's (`document_batches.output`) and a signing certificate's PKCS#12 and password (`signing_certificates`).
    const batch = await app.request('POST', '/api/documents/generate/batch', {
      token: docs.apiKey,
      body: { templateId: docs.templateId, format: 'pdf', documents: [{ variables: { customer: 'Rotation', items: [] } }], output: { encryption: { ownerPassword: 'rotation-batch' } } },
    });
    expect(batch.status).toBe(201);
    const certs = await makeCertificates('rotation-p12');
    const certificate = await app.request('POST', '/api/signing-certificates', { token: docs.user.accessToken, body: { p12: certs.p12.toString('base64'), password: 'rotation-p12' } });
    await certs.cleanup();
    expect(certificate.status).toBe(201);
    expect((await storedSecretTexts()).some((t) => t.includes(`${SEALED_PREFIX}${ID_A}:`))).toBe(true);

    // The operator's procedure: new key, old key as previous, then the admin command (a real process).
    const { stdout } = await execFileAsync(process.execPath, [join(__dirname, '../../../dist/scripts/admin.js'), 'rotate-encryption-key'], {
      env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: app.dataDir, DATABASE_URL: app.env.DATABASE_URL, ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A },
    });
    expect(stdout).toMatch(new RegExp(`^re-encrypted \\d+ rows with key ${ID_B} \\(users\\.two_factor_secret \\d+,`));

    const texts = await storedSecretTexts();
    expect(texts.join('\n')).not.toContain(`${SEALED_PREFIX}${ID_A}:`);
    // Seeds, subscription and delivery secrets, delivery headers, render config, channels, idempotent answers: each column has some.
    expect(texts.filter((t) => t.includes(`${SEALED_PREFIX}${ID_B}:`)).length).toBeGreaterThanOrEqual(SECRET_COLUMNS.length);
    // The new key alone opens what is stored now.
    const onlyB = createKeyring(decodeKey(KEY_B)!);
    const [row] = await db().query(`SELECT two_factor_secret FROM users WHERE id = $1`, [user.id]);
    expect(unseal(onlyB, row.two_factor_secret)).toBe(seed);
    const [sub] = await db().query(`SELECT secret FROM webhook_subscriptions WHERE id = $1`, [subscription.id]);
    expect(unseal(onlyB, sub.secret)).toBe(subscription.secret);
    const [gate] = await db().query(`SELECT render_config, delivery_channels FROM flow_gates WHERE id = $1`, [gateId]);
    expect(unseal(onlyB, gate.render_config.secret)).toBe(RENDER_SECRET);
    expect(unseal(onlyB, gate.delivery_channels[0].headers['X-Api-Key'])).toBe(HEADER_VALUE);
    const [job] = await db().query(`SELECT output FROM document_jobs WHERE id = $1`, [encrypted.body.jobId]);
    expect([unseal(onlyB, job.output.encryption.ownerPassword), unseal(onlyB, job.output.encryption.userPassword)]).toEqual(['rotation-owner', 'rotation-user']);
    // A second run finds nothing left to do.
    const { stdout: again } = await execFileAsync(process.execPath, [join(__dirname, '../../../dist/scripts/admin.js'), 'rotate-encryption-key'], {
      env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: app.dataDir, DATABASE_URL: app.env.DATABASE_URL, ENCRYPTION_KEY: KEY_B },
    });
    expect(again).toMatch(/^re-encrypted 0 rows/);

    // The service restarted with the new key: sign-in with the app code, signed deliveries, new secrets under the new key.
    await createServices(loadConfig({ ...app.env, ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A })).then((s) => s.close());
    expect(activeKeyring().current.id).toBe(ID_B);
    expect((await login(user, totp(seed, Date.now() + 30_000))).status).toBe(200);
    const before = requestsTo('/document-hook').length;
    await sendTest(app, ws.user.accessToken, subscription.id);
    expect(signedWith(await waitForRequestTo('/document-hook', before + 1), subscription.secret)).toBe(true);
    const deliveriesBefore = requestsTo('/deliver').length;
    receiver.respondWith([{ status: 200, body: PDF_BODY, headers: { 'content-type': 'application/pdf' } }], 200);
    expect((await submitAndFinish(gateId, { customer: 'Grace' })).status).toBe('completed');
    expect(signedWith(await waitForRequestTo('/deliver', deliveriesBefore + 1), CHANNEL_SECRET)).toBe(true);
    const fresh = await subscribe(app, ws.user.accessToken, { url: `${receiver.url}/fresh` });
    const [freshRow] = await db().query(`SELECT secret FROM webhook_subscriptions WHERE id = $1`, [fresh.id]);
    expect(unseal(onlyB, freshRow.secret)).toBe(fresh.secret);
  });

  it('plaintext secrets written before encryption existed are read as they are and encrypted at start-up (idempotent)', async () => {
    const user = await signUp(app);
    const seed = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    await db().query(`UPDATE users SET two_factor_enabled = true, two_factor_secret = $2 WHERE id = $1`, [user.id, seed]);
    await db().query(`UPDATE webhook_subscriptions SET secret = 'whsec_legacy_plain_secret' WHERE id = $1`, [subscription.id]);
    await db().query(`UPDATE flow_gates SET render_config = $2::jsonb, delivery_channels = $3::jsonb WHERE id = $1`, [
      gateId,
      JSON.stringify({ url: `${receiver.url}/render`, secret: 'legacy_render_secret' }),
      JSON.stringify([{ type: 'webhook', url: `${receiver.url}/deliver`, secret: 'legacy_channel_secret', headers: { 'X-Api-Key': 'legacy-header-value' } }]),
    ]);
    // Read-time fallback: the plaintext row still works before anything re-encrypted it.
    const before = requestsTo('/document-hook').length;
    await sendTest(app, ws.user.accessToken, subscription.id);
    expect(signedWith(await waitForRequestTo('/document-hook', before + 1), 'whsec_legacy_plain_secret')).toBe(true);

    // What every role runs at start-up (platform/services.ts).
    const services = await createServices(loadConfig({ ...app.env, ENCRYPTION_KEY: KEY_B }));
    await services.close();
    for (const secret of [seed, 'whsec_legacy_plain_secret', 'legacy_render_secret', 'legacy_channel_secret', 'legacy-header-value']) {
      expect(await findInDatabase(db(), secret)).toEqual([]);
    }
    expect(Object.values(await reencryptStoredSecrets(db(), activeKeyring(), 'plaintext')).every((n) => n === 0)).toBe(true);

    expect((await login(user, totp(seed))).status).toBe(200);
    const stored = await db().getRepository(GateEntity).findOneByOrFail({ id: gateId });
    expect(stored.renderConfig).toEqual({ url: `${receiver.url}/render`, secret: 'legacy_render_secret' });
    expect(stored.deliveryChannels[0]).toMatchObject({ secret: 'legacy_channel_secret', headers: { 'X-Api-Key': 'legacy-header-value' } });
  });
});
