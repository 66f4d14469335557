import { createApiKeyUsageRecorder } from '../../../api/identity/api-key-usage';
import { startApiServer } from '../../../api/server';
import { addApiKeyUsage, recordDocumentsGenerated } from '../../../db/identity/api-key-usage';
import { makeRequest, startTestApp, type TestApp } from '../../support/app';
import { createKey, findInDatabase } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';

const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/**
 * Usage statistics (GET /api/api-keys/:id/stats) and the batched recorder behind them. Requests
 * "made with the key" go to /api/health: no route reachable with an API key exists in this domain,
 * and the authenticate middleware resolves (and counts) the key on every route before routing,
 * so a public route exercises exactly the path a document request will take.
 */
describe('API key usage statistics', () => {
  let app: TestApp;
  let user: SignedUpUser;
  beforeAll(async () => {
    // A short interval keeps the waits below short; the default (5 s) behaves the same, only slower.
    app = await startTestApp({ env: { API_KEY_USAGE_FLUSH_MS: '50' } });
    user = await signUp(app, { verified: true });
  });
  afterAll(() => app.close());

  const stats = async (id: string) => {
    const res = await app.request('GET', `/api/api-keys/${id}/stats`, { token: user.accessToken });
    expect(res.status).toBe(200);
    return res.body as { totalRequests: number; requestsToday: number; documentsGenerated: number; lastUsedAt: string | null };
  };
  const useKey = async (plainKey: string, times: number) => {
    for (let i = 0; i < times; i += 1) expect((await app.request('GET', '/api/health', { token: plainKey })).status).toBe(200);
  };

  it('starts at zero', async () => {
    const key = await createKey(app, user.accessToken);
    expect(await stats(key.id)).toEqual({ totalRequests: 0, requestsToday: 0, documentsGenerated: 0, lastUsedAt: null });
  });

  it('counts requests made with the key, and shows lastUsedAt on the key too', async () => {
    const key = await createKey(app, user.accessToken);
    const other = await createKey(app, user.accessToken);
    const before = Date.now();
    await useKey(key.plainKey, 3);
    const after = await waitFor(async () => {
      const s = await stats(key.id);
      return s.totalRequests === 3 ? s : undefined;
    }, { what: 'three requests in the stats' });
    expect(after).toMatchObject({ totalRequests: 3, requestsToday: 3, documentsGenerated: 0 });
    expect(Date.parse(after.lastUsedAt!)).toBeGreaterThanOrEqual(before - 1000);
    expect((await app.request('GET', `/api/api-keys/${key.id}`, { token: user.accessToken })).body.lastUsedAt).toBe(after.lastUsedAt);
    // JWT calls about the key are not uses of the key, and another key's counters are untouched.
    expect((await stats(key.id)).totalRequests).toBe(3);
    expect(await stats(other.id)).toMatchObject({ totalRequests: 0, lastUsedAt: null });
  });

  it('does not count requests refused for a revoked key', async () => {
    const revoked = await createKey(app, user.accessToken);
    const witness = await createKey(app, user.accessToken);
    await app.request('POST', `/api/api-keys/${revoked.id}/revoke`, { token: user.accessToken });
    for (let i = 0; i < 2; i += 1) expect((await app.request('GET', '/api/api-keys', { token: revoked.plainKey })).body.code).toBe('ERR_AKEY_003');
    await useKey(witness.plainKey, 1);
    // The witness is written by the same flush that would carry the revoked key's counts.
    await waitFor(async () => (await stats(witness.id)).totalRequests === 1, { what: 'the witness request' });
    expect(await stats(revoked.id)).toMatchObject({ totalRequests: 0, lastUsedAt: null });
  });

  it('counts documents recorded by generation', async () => {
    const key = await createKey(app, user.accessToken);
    await recordDocumentsGenerated(app.services.db, key.id, 2);
    await recordDocumentsGenerated(app.services.db, key.id, 1);
    expect((await stats(key.id)).documentsGenerated).toBe(3);
  });

  it('starts requestsToday again on a new UTC day and keeps the total', async () => {
    const key = await createKey(app, user.accessToken);
    // As if the key had been used yesterday.
    await app.services.db.query(
      `UPDATE api_keys SET total_requests = 10, requests_today = 7, requests_day = $2, last_used_at = now() - interval '1 day' WHERE id = $1`,
      [key.id, utcDay(-1)],
    );
    expect(await stats(key.id)).toMatchObject({ totalRequests: 10, requestsToday: 0 });
    await useKey(key.plainKey, 2);
    const s = await waitFor(async () => {
      const now = await stats(key.id);
      return now.totalRequests === 12 ? now : undefined;
    }, { what: 'the two new requests' });
    expect(s.requestsToday).toBe(2);
    const [row] = await app.services.db.query(`SELECT requests_day::text AS day FROM api_keys WHERE id = $1`, [key.id]);
    expect(row.day).toBe(utcDay());
  });

  it('lets a late batch for an earlier day add to the total without rolling the day back', async () => {
    const key = await createKey(app, user.accessToken);
    const today = new Date();
    await addApiKeyUsage(app.services.db, { apiKeyId: key.id, day: utcDay(), requests: 4, lastUsedAt: today });
    await addApiKeyUsage(app.services.db, { apiKeyId: key.id, day: utcDay(-1), requests: 5, lastUsedAt: new Date(today.getTime() - 86_400_000) });
    expect(await stats(key.id)).toEqual({ totalRequests: 9, requestsToday: 4, documentsGenerated: 0, lastUsedAt: today.toISOString() });
  });

  it('writes buffered requests only when flushed, per key, and on stop', async () => {
    const [a, b] = [await createKey(app, user.accessToken), await createKey(app, user.accessToken)];
    // An hour-long interval: only the explicit flush can write.
    const recorder = createApiKeyUsageRecorder({ db: app.services.db, logger: app.services.logger, flushMs: 3_600_000 });
    for (let i = 0; i < 5; i += 1) recorder.record(a.id);
    recorder.record(b.id);
    expect((await stats(a.id)).totalRequests).toBe(0);
    await recorder.flush();
    expect((await stats(a.id)).totalRequests).toBe(5);
    expect((await stats(b.id)).totalRequests).toBe(1);
    await recorder.flush();
    recorder.record(b.id);
    await recorder.stop();
    expect((await stats(a.id)).totalRequests).toBe(5);
    expect((await stats(b.id)).requestsToday).toBe(2);
  });

  it('flushes what it buffered when the API server closes', async () => {
    const key = await createKey(app, user.accessToken);
    // A second API server on the same database whose timer never fires within the test.
    const services = { ...app.services, config: { ...app.services.config, apiKeys: { ...app.services.config.apiKeys, usageFlushMs: 3_600_000 } } };
    const server = await startApiServer(services, {}, 0, '127.0.0.1');
    const request = makeRequest(server.url);
    for (let i = 0; i < 4; i += 1) expect((await request('GET', '/api/health', { token: key.plainKey })).status).toBe(200);
    expect((await stats(key.id)).totalRequests).toBe(0);
    await server.close();
    expect(await stats(key.id)).toMatchObject({ totalRequests: 4, requestsToday: 4 });
  });

  it('leaves the plain key nowhere in the database, after creation and use', async () => {
    const key = await createKey(app, user.accessToken, { name: 'secret holder', permissions: { manage_webhooks: true } });
    await useKey(key.plainKey, 2);
    await app.request('PATCH', `/api/api-keys/${key.id}`, { token: user.accessToken, body: { name: 'renamed' } });
    await waitFor(async () => (await stats(key.id)).totalRequests === 2, { what: 'usage flushed' });
    const random = key.plainKey.slice('fm_live_'.length);
    expect(random).toMatch(/^[0-9A-Za-z]{32,}$/);
    expect(await findInDatabase(app.services.db, key.plainKey)).toEqual([]);
    expect(await findInDatabase(app.services.db, random)).toEqual([]);
    // The scan does read the table: the prefix shown to users is found where expected.
    expect(await findInDatabase(app.services.db, key.keyPrefix)).toEqual(['api_keys.key_prefix']);
  });
});
