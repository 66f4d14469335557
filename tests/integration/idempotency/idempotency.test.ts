import { randomUUID } from 'node:crypto';
import { claimKey, completeKey, deleteExpiredKeys } from '../../../db/idempotency/idempotency-keys';
import { requestFingerprint } from '../../../domain/idempotency';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { createGate, flowWorkspace, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { buildTemplate } from '../../support/templates';
import { runMaintenance } from '../../support/maintenance';
import { waitFor } from '../../support/wait';

/** Idempotency-Key (docs/idempotency.md) against the real service, Postgres and Temporal. */
describe('Idempotency-Key', () => {
  let app: TestApp;
  let p: DocumentProject;
  let other: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp({ env: { FREE_DOCUMENTS_PER_MONTH: '10000', RATE_LIMIT_API_KEY: '100000' } });
    p = await setupDocumentProject(app);
    other = await setupDocumentProject(app);
  });
  afterAll(() => app.close());

  const letter = (tag: string) => ({ customer: 'Idem', items: [{ label: tag, amount: 1 }] });
  const generate = (key: string | undefined, body: Record<string, unknown>, project = p) =>
    app.request('POST', '/api/documents/generate', { token: project.apiKey, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
  const genBody = (tag: string, project = p) => ({ templateId: project.templateId, format: 'pdf', variables: letter(tag), metadata: { tag } });
  const jobsTagged = async (tag: string, project = p): Promise<number> =>
    (await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1 AND metadata->>'tag' = $2`, [project.projectId, tag]))[0].n;
  const keyRow = async (projectId: string, key: string) =>
    (await app.services.db.query(`SELECT state, response IS NOT NULL AS has_answer FROM idempotency_keys WHERE project_id = $1 AND key = $2`, [projectId, key]))[0];

  it('stores the first answer and replays it, headers included, without creating again', async () => {
    const key = randomUUID();
    const first = await generate(key, genBody('replay'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await generate(key, genBody('replay'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    // Key order in the body does not matter: the fingerprint is of the canonical JSON.
    const { format, templateId, variables, metadata } = genBody('replay');
    const reordered = await generate(key, { metadata, variables, format, templateId });
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    expect(reordered.body.jobId).toBe(first.body.jobId);
    expect(await jobsTagged('replay')).toBe(1);
    // The stored answer is sealed at rest: the job id does not appear in clear.
    const [raw] = await app.services.db.query(`SELECT response FROM idempotency_keys WHERE key = $1`, [key]);
    expect(raw.response).toMatch(/^enc:v1:/);
    expect(raw.response).not.toContain(first.body.jobId);
  });

  it('answers 422 ERR_IDEM_001 for the same key with another body, path or method, and creates nothing', async () => {
    const key = randomUUID();
    expect((await generate(key, genBody('mismatch-a'))).status).toBe(201);
    const other422 = await generate(key, genBody('mismatch-b'));
    expect(other422.status).toBe(422);
    expect(other422.body.code).toBe('ERR_IDEM_001');
    const batch = await app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      headers: { 'Idempotency-Key': key },
      body: { templateId: p.templateId, format: 'pdf', documents: [{ variables: letter('x') }] },
    });
    expect(batch.status).toBe(422);
    expect(batch.body.code).toBe('ERR_IDEM_001');
    expect(await jobsTagged('mismatch-b')).toBe(0);
  });

  it('answers 409 ERR_IDEM_002 with Retry-After while the first request is in flight, then replays its answer', async () => {
    const tag = 'in-flight';
    expect((await generate(undefined, genBody('warm-up'))).status).toBe(201); // the month's quota row exists
    // Hold the first request inside its transaction: another session locks the project's quota row.
    const runner = app.services.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT 1 FROM document_quota_usage WHERE project_id = $1 FOR UPDATE`, [p.projectId]);
      const key = randomUUID();
      const firstP = generate(key, genBody(tag));
      await waitFor(async () => (await keyRow(p.projectId, key))?.state === 'in_flight', { what: 'the key to be claimed' });
      const second = await generate(key, genBody(tag));
      expect(second.status).toBe(409);
      expect(second.body.code).toBe('ERR_IDEM_002');
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(second.body.retryAfter).toBe(Number(second.headers.get('retry-after')));
      await runner.commitTransaction();
      const first = await firstP;
      expect(first.status).toBe(201);
      const third = await generate(key, genBody(tag));
      expect(third.headers.get('idempotent-replayed')).toBe('true');
      expect(third.body).toEqual(first.body);
      expect(await jobsTagged(tag)).toBe(1);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('two concurrent requests with one key create exactly one job; each answer is that job or a 409', async () => {
    for (const [round, n] of [[1, 2], [2, 10]] as const) {
      const key = randomUUID();
      const tag = `concurrent-${round}`;
      const answers = await Promise.all(Array.from({ length: n }, () => generate(key, genBody(tag))));
      expect(await jobsTagged(tag)).toBe(1);
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.jobId)).size).toBe(1);
      for (const a of answers.filter((x) => x.status !== 201)) {
        expect(a.status).toBe(409);
        expect(a.headers.get('retry-after')).not.toBeNull();
      }
      // Once the first has answered, every repeat is its replay.
      const later = await generate(key, genBody(tag));
      expect(later.body.jobId).toBe(created[0].body.jobId);
    }
  });

  it('scopes keys per project: another project with the same key and body creates its own job', async () => {
    const key = randomUUID();
    const mine = await generate(key, genBody('scoped'));
    const theirs = await generate(key, genBody('scoped', other), other);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.jobId).not.toBe(mine.body.jobId);
    expect(await jobsTagged('scoped')).toBe(1);
    expect(await jobsTagged('scoped', other)).toBe(1);
  });

  it('a refused request leaves the key free: nothing was created, and the corrected request succeeds with the same key', async () => {
    const key = randomUUID();
    const refused = await generate(key, { ...genBody('refused'), useCredit: true }); // the project has no credits
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(await keyRow(p.projectId, key)).toBeUndefined();
    const ok = await generate(key, genBody('refused'));
    expect(ok.status).toBe(201);
    expect(await jobsTagged('refused')).toBe(1);
  });

  it('a claim whose request died is blocked until its lease ends, then taken over once', async () => {
    const key = randomUUID();
    const body = genBody('crashed');
    const fingerprint = requestFingerprint({ method: 'POST', path: '/api/documents/generate', projectId: p.projectId, body });
    // What a process killed between claim and commit leaves behind: a claim in flight, nothing created.
    const claimed = await claimKey(app.services.db, { projectId: p.projectId, key, fingerprint, method: 'POST', path: '/api/documents/generate' });
    expect(claimed.kind).toBe('claimed');
    const blocked = await generate(key, body);
    expect(blocked.status).toBe(409);
    await app.services.db.query(`UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = $1`, [key]);
    const taken = await generate(key, body);
    expect(taken.status).toBe(201);
    expect(taken.headers.get('idempotent-replayed')).toBeNull();
    expect((await generate(key, body)).body.jobId).toBe(taken.body.jobId);
    expect(await jobsTagged('crashed')).toBe(1);
    // The dead request's claim can no longer complete: its transaction would roll back.
    if (claimed.kind !== 'claimed') throw new Error('unreachable');
    await expect(app.services.db.transaction((m) => completeKey(m, claimed.claim, { status: 201, headers: {}, body: {} }))).rejects.toMatchObject({ code: 'ERR_IDEM_002' });
  });

  it('forgets a key after its expiry: the same key then creates again; the sweep deletes expired keys', async () => {
    const key = randomUUID();
    const first = await generate(key, genBody('expiry'));
    await app.services.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    const second = await generate(key, genBody('expiry'));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.jobId).not.toBe(first.body.jobId);
    expect(await jobsTagged('expiry')).toBe(2);

    const expiredKey = randomUUID();
    await generate(expiredKey, genBody('expiry-sweep'));
    await app.services.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [expiredKey]);
    expect(await deleteExpiredKeys(app.services.db, 500)).toBeGreaterThanOrEqual(1);
    expect(await keyRow(p.projectId, expiredKey)).toBeUndefined();
    expect(await keyRow(p.projectId, key)).toBeDefined();
  });

  it('the maintenance workflow deletes expired keys and keeps live ones', async () => {
    const live = randomUUID();
    const dead = [randomUUID(), randomUUID()];
    for (const key of [live, ...dead]) expect((await generate(key, genBody('maintenance'))).status).toBe(201);
    await app.services.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ANY($1)`, [dead]);
    await runMaintenance(app, { retentionSeconds: 3600, strandedAfterSeconds: 3600, deletionGraceSeconds: 302 });
    for (const key of dead) expect(await keyRow(p.projectId, key)).toBeUndefined();
    expect(await keyRow(p.projectId, live)).toMatchObject({ state: 'completed', has_answer: true });
  });

  it('covers retries: one retry job per key, written with its answer', async () => {
    const first = await generate(undefined, genBody('retry-source'));
    await waitForJob(app, p.apiKey, first.body.jobId);
    await app.services.db.query(`UPDATE document_jobs SET status = 'failed' WHERE id = $1`, [first.body.jobId]); // a failed job to retry
    const key = randomUUID();
    const send = () => app.request('POST', `/api/documents/jobs/${first.body.jobId}/retry`, { token: p.apiKey, headers: { 'Idempotency-Key': key } });
    const answers = await Promise.all([send(), send(), send()]);
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    for (const a of answers) {
      if (a.status === 201) expect(a.body).toEqual(replay.body);
      else expect(a.status).toBe(409);
    }
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE retry_of = $1`, [first.body.jobId]);
    expect(n).toBe(1);
  });

  it('covers batches: one batch per key, replayed with its Location', async () => {
    const key = randomUUID();
    const body = { templateId: p.templateId, format: 'pdf', metadata: { tag: 'batch' }, documents: [{ variables: letter('a') }, { variables: letter('b') }] };
    const send = () => app.request('POST', '/api/documents/generate/batch', { token: p.apiKey, headers: { 'Idempotency-Key': key }, body });
    const [a, b] = await Promise.all([send(), send()]);
    const first = await send();
    expect(first.headers.get('idempotent-replayed')).toBe('true');
    for (const r of [a, b].filter((x) => x.status === 201)) expect(r.body.batchId).toBe(first.body.batchId);
    expect(first.headers.get('location')).toContain(first.body.batchId);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM document_batches WHERE project_id = $1 AND metadata->>'tag' = 'batch'`, [p.projectId]);
    expect(n).toBe(1);
    expect(await jobsTagged('batch')).toBe(2);
  });

  describe('Flow', () => {
    let ws: FlowWorkspace;
    let gate: { id: string };
    beforeAll(async () => {
      ws = await flowWorkspace(app);
      gate = await createGate(app, ws.key, { name: 'Idempotent invoices', schema: invoiceSchema });
    });
    const runs = async (marker: string): Promise<number> =>
      (await app.services.db.query(`SELECT count(*)::int AS n FROM flow_runs WHERE project_id = $1 AND input_payload->>'customer' = $2`, [ws.projectId, marker]))[0].n;

    it('records one run per key, concurrent repeats included, and replays runs and validate answers (422 too)', async () => {
      const key = randomUUID();
      const body = { payload: { customer: 'Once only', items: [{ price: 1, qty: 1 }] } };
      const send = () => app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, headers: { 'Idempotency-Key': key }, body });
      const answers = await Promise.all([send(), send(), send()]);
      expect(await runs('Once only')).toBe(1);
      const replay = await send();
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      for (const a of answers) {
        if (a.status === 201) expect(a.body.id).toBe(replay.body.id);
        else expect(a.status).toBe(409);
      }
      expect(replay.headers.get('location')).toContain(replay.body.id);

      const vkey = randomUUID();
      const invalid = { customer: 'X', items: 'nope' };
      const v1 = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, headers: { 'Idempotency-Key': vkey }, body: invalid });
      const v2 = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, headers: { 'Idempotency-Key': vkey }, body: invalid });
      expect(v1.status).toBe(422);
      expect(v2.status).toBe(422);
      expect(v2.headers.get('idempotent-replayed')).toBe('true');
      expect(v2.body).toEqual(v1.body);
      expect(await runs('X')).toBe(1);
    });

    it('covers gate creation (stored after the answer)', async () => {
      const key = randomUUID();
      const send = () => app.request('POST', '/api/flow/gates', { token: ws.key, headers: { 'Idempotency-Key': key }, body: { name: 'Keyed gate' } });
      const first = await send();
      const second = await send();
      expect(first.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body.id).toBe(first.body.id);
      const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_gates WHERE project_id = $1 AND name = 'Keyed gate'`, [ws.projectId]);
      expect(n).toBe(1);
    });
  });

  it('covers templates, webhooks and API keys; a created API key is replayed to its creator but stored sealed', async () => {
    const token = p.user.accessToken;
    const key = randomUUID();
    const create = () => app.request('POST', '/api/api-keys', { token, headers: { 'Idempotency-Key': key }, body: { name: 'idempotent key' } });
    const a = await create();
    const b = await create();
    expect(a.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    const plain = JSON.stringify(a.body).match(/fm_live_[A-Za-z0-9]+/)?.[0];
    expect(plain).toBeDefined();
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE response LIKE '%' || $1 || '%'`, [plain]);
    expect(n).toBe(0);

    const tkey = randomUUID();
    const tbody = buildTemplate({ name: `Keyed template ${tkey.slice(0, 8)}` });
    const t1 = await app.request('POST', '/api/templates', { token, headers: { 'Idempotency-Key': tkey }, body: tbody });
    const t2 = await app.request('POST', '/api/templates', { token, headers: { 'Idempotency-Key': tkey }, body: tbody });
    expect(t1.status).toBe(201);
    expect(t2.headers.get('idempotent-replayed')).toBe('true');
    expect(t2.body.id).toBe(t1.body.id);
    const [{ t }] = await app.services.db.query(`SELECT count(*)::int AS t FROM templates WHERE name = $1`, [tbody.name]);
    expect(t).toBe(1);

    // A refused request is not stored: its repeat is refused the same way, not replayed.
    const wkey = randomUUID();
    const w1 = await app.request('POST', '/api/webhooks', { token, headers: { 'Idempotency-Key': wkey }, body: { url: 'not a url', events: [] } });
    const w2 = await app.request('POST', '/api/webhooks', { token, headers: { 'Idempotency-Key': wkey }, body: { url: 'not a url', events: [] } });
    expect(w1.status).toBe(400);
    expect(w2.status).toBe(400);
    expect(w2.headers.get('idempotent-replayed')).toBeNull();
  });

  describe('hostile', () => {
    it('refuses keys that are empty, too long, or hold spaces, control or non-ASCII characters (400 ERR_VALID_001)', async () => {
      for (const bad of ['', 'a'.repeat(256), 'has space', 'tab\there', 'caf\u00e9']) {
        const res = await generate(bad, genBody('bad-key'));
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('ERR_VALID_001');
        expect(res.body.relatedInfo?.field).toBe('Idempotency-Key');
      }
      // A control character never reaches the service: Node's parser refuses the request line itself.
      expect(await jobsTagged('bad-key')).toBe(0);
      const ok = await generate('~'.repeat(255), genBody('long-key'));
      expect(ok.status).toBe(201);
    });

    it('keeps the body size limit: 10 MB with a key is 413 and claims nothing', async () => {
      const key = randomUUID();
      const huge = JSON.stringify({ ...genBody('huge'), variables: { customer: 'x'.repeat(10 * 1024 * 1024 + 10), items: [] } });
      const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, headers: { 'Idempotency-Key': key, 'content-type': 'application/json' }, rawBody: huge });
      expect(res.status).toBe(413);
      expect(await keyRow(p.projectId, key)).toBeUndefined();
    });

    it('10,000 distinct keys of one project: each costs one small row, claims stay fast, the sweep removes them in batches', async () => {
      const db = app.services.db;
      const fingerprint = requestFingerprint({ method: 'POST', path: '/x', projectId: other.projectId, body: {} });
      const keys = Array.from({ length: 10_000 }, (_, i) => `bulk-${i}`);
      for (let i = 0; i < keys.length; i += 50) {
        await Promise.all(
          keys.slice(i, i + 50).map(async (key) => {
            const c = await claimKey(db, { projectId: other.projectId, key, fingerprint, method: 'POST', path: '/x' });
            if (c.kind !== 'claimed') throw new Error(c.kind);
            await completeKey(db, c.claim, { status: 201, headers: {}, body: { id: key } });
          }),
        );
      }
      // With the table full, a claim's lookup is still one probe of the primary key, not a scan.
      await db.query('ANALYZE idempotency_keys');
      const plan = (await db.query(`EXPLAIN SELECT state FROM idempotency_keys WHERE project_id = $1 AND key = $2`, [other.projectId, 'bulk-5000'])) as Array<Record<string, string>>;
      expect(plan.map((r) => Object.values(r)[0]).join('\n')).toMatch(/Index (Only )?Scan using idempotency_keys_pkey/);
      const [{ n, bytes }] = await db.query(
        `SELECT count(*)::int AS n, sum(pg_column_size(k.*))::int AS bytes FROM idempotency_keys k WHERE project_id = $1 AND key LIKE 'bulk-%'`,
        [other.projectId],
      );
      expect(n).toBe(10_000);
      expect(bytes / n).toBeLessThan(1024);
      await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE project_id = $1 AND key LIKE 'bulk-%'`, [other.projectId]);
      let swept = 0;
      for (;;) {
        const d = await deleteExpiredKeys(db, 500);
        swept += d;
        if (d < 500) break;
      }
      expect(swept).toBeGreaterThanOrEqual(10_000);
      const [{ left }] = await db.query(`SELECT count(*)::int AS left FROM idempotency_keys WHERE project_id = $1 AND key LIKE 'bulk-%'`, [other.projectId]);
      expect(left).toBe(0);
    });
  });
});
