import { bucketKey, truncateUtc } from '../../../domain/flow/analytics-periods';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, invoiceRules, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { DAY, insertRun } from '../../support/flow-analytics';

const good = { customer: 'Ada', items: [{ price: 10, qty: 2 }] };
const dayKey = (msAgo: number) => bucketKey(truncateUtc(new Date(Date.now() - msAgo), 'day'));

/**
 * Workspace `ws`: gate A (schema + rule) and gate B (no schema), all completing at validation.
 * In the last 30 days: 8 runs — A: 2 completed, 1 schema failure, 1 rule failure (API), 1 failed
 * 20 days ago, 1 mcp run in review today, 1 completed 3 days ago taking 4 s; B: 1 completed.
 * Plus, 60 days ago, one more schema failure of A (only in 90d).
 */
describe('Flow analytics: runs', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let other: FlowWorkspace;
  let a: any;
  let b: any;
  const get = (path: string, key = ws.key) => app.request('GET', `/api/flow/analytics/${path}`, { token: key });

  beforeAll(async () => {
    app = await startTestApp();
    [ws, other] = await Promise.all([flowWorkspace(app, 'growth'), flowWorkspace(app)]);
    a = await createGate(app, ws.key, { name: 'Invoices', schema: invoiceSchema, businessRules: invoiceRules });
    b = await createGate(app, ws.key, { name: 'Notes' });
    const submit = async (gate: any, body: unknown, key = ws.key) => {
      const res = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: key, body: { payload: body } });
      if (res.status !== 201) throw new Error(`run failed: ${res.status} ${res.text}`);
      return res.body;
    };
    expect((await submit(a, good)).status).toBe('completed');
    expect((await submit(a, good)).status).toBe('completed');
    expect((await submit(a, { items: 'x' })).status).toBe('validation_failed');
    expect((await submit(a, { customer: 'Ada', items: [{ price: 0, qty: 1 }] })).status).toBe('validation_failed');
    expect((await submit(b, {})).status).toBe('completed');
    const db = app.services.db;
    const row = { projectId: ws.projectId, gateId: a.id };
    await insertRun(db, { ...row, status: 'failed', agoMs: 20 * DAY, durationMs: 1000, error: 'Render failed: boom' });
    await insertRun(db, { ...row, status: 'review_required', source: 'mcp' });
    await insertRun(db, { ...row, status: 'completed', agoMs: 3 * DAY, durationMs: 4000 });
    await insertRun(db, {
      ...row,
      status: 'validation_failed',
      agoMs: 60 * DAY,
      durationMs: 0,
      validation: { valid: false, failedLayer: 'schema', details: [{ field: 'customer', code: 'REQUIRED', message: 'required' }] },
    });
    // The other workspace's activity must never show in ws's numbers, nor ws's in its.
    const theirs = await createGate(app, other.key, { name: 'Theirs' });
    await submit(theirs, {}, other.key);
  });
  afterAll(() => app.close());

  it('overview: totals, rates, average time to complete and active gates (default 30d)', async () => {
    const res = await get('overview');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      period: '30d',
      gateId: null,
      totals: { runs: 8, completed: 4, failed: 1, validationFailed: 2, inProgress: 0, inReview: 1, approved: 0, rejected: 0, expired: 0 },
      successRate: 57.14, // 4 completed of 7 finished (a percentage, as every rate)
      validationPassRate: 75,
      avgTimeToCompleteMs: 1000, // (0 + 0 + 0 + 4000) / 4
      activeGates: 2,
    });
    expect(new Date(res.body.to).getTime() - new Date(res.body.from).getTime()).toBeGreaterThan(29 * DAY);
    expect((await get('overview?period=7d')).body.totals.runs).toBe(7);
    expect((await get('overview?period=90d')).body.totals).toMatchObject({ runs: 9, validationFailed: 3 });
    const gateB = await get(`overview?gateId=${b.slug}`);
    expect(gateB.body).toMatchObject({ gateId: b.id, totals: { runs: 1, completed: 1 }, successRate: 100, activeGates: 1 });
    expect((await get('overview', other.key)).body.totals).toMatchObject({ runs: 1, completed: 1 });
  });

  it('run-outcomes: every status and both sources', async () => {
    const res = await get(`run-outcomes?gateId=${a.shortId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      period: '30d',
      from: expect.any(String),
      to: expect.any(String),
      gateId: a.id,
      total: 7,
      byStatus: {
        validation_failed: 2, validated: 0, rendering: 0, review_required: 1, approved: 0,
        rejected: 0, expired: 0, delivering: 0, completed: 3, failed: 1,
      },
      bySource: { rest: 6, mcp: 1 },
    });
  });

  it('throughput: one bucket per day, week or month, empty ones filled', async () => {
    const days = await get('throughput?period=7d');
    expect(days.body).toMatchObject({ period: '7d', granularity: 'day' });
    expect(days.body.buckets).toHaveLength(7);
    expect(days.body.buckets[6]).toEqual({ start: dayKey(0), runs: 6, completed: 3, failed: 0, validationFailed: 2 });
    expect(days.body.buckets[3]).toEqual({ start: dayKey(3 * DAY), runs: 1, completed: 1, failed: 0, validationFailed: 0 });
    expect(days.body.buckets.filter((x: any) => x.runs === 0)).toHaveLength(5);

    const weeks = await get('throughput?period=30d&granularity=week');
    const starts = weeks.body.buckets.map((x: any) => new Date(`${x.start}T00:00:00Z`));
    expect(starts.every((d: Date) => d.getUTCDay() === 1)).toBe(true);
    expect(starts.every((d: Date, i: number) => i === 0 || d.getTime() - starts[i - 1].getTime() === 7 * DAY)).toBe(true);
    expect(weeks.body.buckets.reduce((n: number, x: any) => n + x.runs, 0)).toBe(8);

    const months = await get('throughput?period=90d&granularity=month');
    expect(months.body.buckets.length).toBeGreaterThanOrEqual(3);
    expect(months.body.buckets.every((x: any) => x.start.endsWith('-01'))).toBe(true);
    expect(months.body.buckets.reduce((n: number, x: any) => n + x.runs, 0)).toBe(9);
    expect((await get(`throughput?gateId=${b.id}&period=7d`)).body.buckets[6].runs).toBe(1);
  });

  it('validation-errors: by code, field and layer from the stored details', async () => {
    const res = await get('validation-errors');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ failedRuns: 2, byLayer: { schema: 1, business_rules: 1 } });
    expect(res.body.byCode).toEqual(expect.arrayContaining([{ code: 'REQUIRED', count: 1 }, { code: 'RULE', count: 1 }]));
    expect(res.body.byField).toEqual(expect.arrayContaining([{ field: 'customer', count: 1 }, { field: 'total', count: 1 }]));
    expect(res.body.totalErrors).toBe(res.body.byCode.reduce((n: number, c: any) => n + c.count, 0));
    const older = await get('validation-errors?period=90d');
    expect(older.body).toMatchObject({ failedRuns: 3, byLayer: { schema: 2, business_rules: 1 } });
    expect(older.body.byCode).toEqual(expect.arrayContaining([{ code: 'REQUIRED', count: 2 }]));
    expect((await get(`validation-errors?gateId=${b.id}`)).body).toMatchObject({ failedRuns: 0, totalErrors: 0, byCode: [], byField: [] });
  });

  it('gate-metrics: per live gate, busiest first, zero-run gates included', async () => {
    const idle = await createGate(app, ws.key, { name: 'Idle' });
    const res = await get('gate-metrics');
    expect(res.body.gates.map((g: any) => g.gateId)).toEqual([a.id, b.id, idle.id]);
    expect(res.body.gates[0]).toMatchObject({ name: 'Invoices', slug: a.slug, shortId: a.shortId, status: 'active', runs: 7, completed: 3, failed: 1, validationFailed: 2, successRate: 50 });
    expect(res.body.gates[2]).toMatchObject({ runs: 0, successRate: null, lastRunAt: null });
    expect((await get(`gate-metrics?gateId=${b.slug}`)).body.gates).toEqual([expect.objectContaining({ gateId: b.id, runs: 1, successRate: 100 })]);
    await app.request('DELETE', `/api/flow/gates/${idle.id}`, { token: ws.key });
  });

  it('another workspace cannot name this workspace’s gates', async () => {
    for (const path of ['overview', 'run-outcomes', 'throughput', 'validation-errors', 'approval-metrics', 'infra-health', 'gate-metrics']) {
      const res = await get(`${path}?gateId=${a.id}`, other.key);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'FLOW.GATE_NOT_FOUND']);
    }
    expect((await get('gate-metrics', other.key)).body.gates.map((g: any) => g.name)).toEqual(['Theirs']);
  });

  it('refuses a bad period, granularity or unknown field, and calls without a key', async () => {
    const cases: Array<[string, string]> = [
      ['overview?period=1y', 'period'],
      ['throughput?granularity=hour', 'granularity'],
      ['overview?granularity=day', 'granularity'], // not a parameter of overview
      ['team-overview?gateId=x', 'gateId'],
      ['combined-timeline?period=14d', 'period'],
      ['plans?period=7d', 'period'],
      ['billing-summary?foo=1', 'foo'],
    ];
    for (const [path, field] of cases) {
      const res = await get(path);
      expect([path, res.status, res.body.code, res.body.relatedInfo?.field]).toEqual([path, 400, 'ERR_VALID_001', field]);
    }
    expect((await get('overview?gateId=no-such-gate')).status).toBe(404);
    expect((await app.request('GET', '/api/flow/analytics/overview')).status).toBe(401);
  });
});
