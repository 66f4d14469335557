import { bucketKey, truncateUtc } from '../../../domain/flow/analytics-periods';
import { createKey } from '../../support/api-keys';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { DAY, insertApproval, insertDelivery, insertDocumentJob, insertRun } from '../../support/flow-analytics';

const dayKey = (msAgo: number) => bucketKey(truncateUtc(new Date(Date.now() - msAgo), 'day'));

describe('Flow analytics: approvals, infrastructure, billing, team and prices', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let other: FlowWorkspace;
  let gate: any;
  let second: any;
  const get = (path: string, key = ws.key) => app.request('GET', `/api/flow/analytics/${path}`, { token: key });

  beforeAll(async () => {
    app = await startTestApp();
    [ws, other] = await Promise.all([flowWorkspace(app, 'starter'), flowWorkspace(app)]);
    gate = await createGate(app, ws.key, { name: 'Contracts' });
    second = await createGate(app, ws.key, { name: 'Quotes' });
  });
  afterAll(() => app.close());

  it('approval-metrics: counts per status, approval rate, median and p90 decision time', async () => {
    const db = app.services.db;
    const base = { projectId: ws.projectId, gateId: gate.id };
    for (const [status, decisionMs] of [['approved', 1000], ['approved', 3000], ['rejected', 5000], ['expired', 9000], ['pending', undefined]] as const) {
      const runId = await insertRun(db, { ...base, status: 'review_required' });
      await insertApproval(db, { ...base, runId, status, decisionMs });
    }
    const elsewhere = await insertRun(db, { projectId: ws.projectId, gateId: second.id, status: 'review_required' });
    await insertApproval(db, { projectId: ws.projectId, gateId: second.id, runId: elsewhere, status: 'approved', decisionMs: 100 });
    const old = await insertRun(db, { ...base, status: 'approved', agoMs: 40 * DAY });
    await insertApproval(db, { ...base, runId: old, status: 'approved', decisionMs: 100, agoMs: 40 * DAY });

    const res = await get(`approval-metrics?gateId=${gate.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      period: '30d',
      gateId: gate.id,
      requested: 5,
      approved: 2,
      rejected: 1,
      expired: 1,
      pending: 1,
      approvalRate: 50,
      medianDecisionMs: 3000,
      p90DecisionMs: 4600, // expired requests are not decisions: of 1000, 3000, 5000
    });
    expect((await get('approval-metrics')).body).toMatchObject({ requested: 6, approved: 3 });
    expect((await get('approval-metrics?period=90d')).body.requested).toBe(7);
    expect((await get('approval-metrics', other.key)).body).toMatchObject({ requested: 0, approvalRate: null, medianDecisionMs: null, p90DecisionMs: null });
  });

  it('infra-health: delivery outcomes and attempts, circuit states, render failures', async () => {
    const db = app.services.db;
    const base = { projectId: ws.projectId, gateId: gate.id };
    const run = await insertRun(db, { ...base, status: 'failed', error: '1 of 2 deliveries failed' });
    await insertDelivery(db, { runId: run, projectId: ws.projectId, status: 'completed', attempts: 1 });
    await insertDelivery(db, { runId: run, projectId: ws.projectId, status: 'completed', attempts: 2 });
    await insertDelivery(db, { runId: run, projectId: ws.projectId, status: 'failed', attempts: 4 });
    await insertDelivery(db, { runId: run, projectId: ws.projectId, status: 'pending', attempts: 0 });
    const quote = await insertRun(db, { projectId: ws.projectId, gateId: second.id, status: 'completed' });
    await insertDelivery(db, { runId: quote, projectId: ws.projectId, status: 'completed', attempts: 1 });
    await insertRun(db, { ...base, status: 'failed', error: 'Render failed: template missing' });
    await db.query(`UPDATE flow_gates SET circuit_state = 'open', consecutive_failures = 5, circuit_open_until = now() + interval '5 minutes' WHERE id = $1`, [gate.id]);

    const res = await get(`infra-health?gateId=${gate.slug}`);
    expect(res.status).toBe(200);
    expect(res.body.deliveries).toEqual({ total: 4, completed: 2, failed: 1, pending: 1, successRate: 66.67, avgAttempts: 2.33 });
    expect(res.body.renderFailures).toBe(1);
    expect(res.body.circuitBreakers).toEqual([
      { gateId: gate.id, name: 'Contracts', enabled: true, state: 'open', consecutiveFailures: 5, openUntil: expect.any(String) },
    ]);
    const all = await get('infra-health');
    expect(all.body.deliveries).toMatchObject({ total: 5, completed: 3 });
    // Open circuits first: the one a reader needs to see.
    expect(all.body.circuitBreakers.map((c: any) => [c.name, c.state])).toEqual([['Contracts', 'open'], ['Quotes', 'closed']]);
  });

  it('billing-summary: plan, this month’s runs against the allowance, overage, limits and gates', async () => {
    const starter = await flowWorkspace(app, 'starter');
    const g = await createGate(app, starter.key, { name: 'Busy' });
    // 3 runs past Starter's 10,000, inserted in one statement (the API would take minutes).
    await app.services.db.query(
      `INSERT INTO flow_runs (id, short_id, gate_id, project_id, schema_version, status, source, input_payload, validation, created_at)
       SELECT gen_random_uuid(), 'frun_bulk_' || i, $1, $2, 1, 'completed', 'rest', '{}', '{}', now() FROM generate_series(1, 10003) i`,
      [g.id, starter.projectId],
    );
    const month = new Date().toISOString().slice(0, 7);
    const res = await get('billing-summary', starter.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      plan: 'starter',
      planName: 'Starter',
      month,
      runsThisMonth: 10003,
      runsIncluded: 10000,
      runsRemaining: 0,
      overageRuns: 3,
      overagePerRunUsd: 0.005,
      overageCostUsd: 0.02,
      monthlyPriceUsd: 29,
      estimatedTotalUsd: 29.02,
      limits: { maxGates: null, maxApproversPerGate: 10, contentLimitChars: 100000, retentionDays: 5 },
      gates: { used: 1, max: null },
    });
    const free = await get('billing-summary', other.key);
    expect(free.body).toMatchObject({
      plan: 'free',
      runsThisMonth: 0,
      runsIncluded: 500,
      runsRemaining: 500,
      overageRuns: 0,
      overagePerRunUsd: null,
      overageCostUsd: 0,
      monthlyPriceUsd: 0,
      limits: { maxGates: 3, maxApproversPerGate: 5, contentLimitChars: 50000, retentionDays: 3 },
      gates: { used: 0, max: 3 },
    });
  });

  it('combined-timeline: documents and runs per bucket, empty buckets filled', async () => {
    const tl = await flowWorkspace(app);
    const g = await createGate(app, tl.key, { name: 'Timeline' });
    const db = app.services.db;
    await insertDocumentJob(db, tl.projectId, 0);
    await insertDocumentJob(db, tl.projectId, 0);
    await insertDocumentJob(db, tl.projectId, 2 * DAY);
    await insertDocumentJob(db, tl.projectId, 10 * DAY);
    await insertRun(db, { projectId: tl.projectId, gateId: g.id, status: 'completed', agoMs: 2 * DAY });
    await insertDocumentJob(db, other.projectId, 0);

    const res = await get('combined-timeline?period=7d', tl.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ period: '7d', granularity: 'day', totals: { documents: 3, runs: 1 } });
    expect(res.body.buckets).toHaveLength(7);
    expect(res.body.buckets[6]).toEqual({ start: dayKey(0), documents: 2, runs: 0 });
    expect(res.body.buckets[4]).toEqual({ start: dayKey(2 * DAY), documents: 1, runs: 1 });
    const months = await get('combined-timeline?period=30d&granularity=month', tl.key);
    expect(months.body.totals).toEqual({ documents: 4, runs: 1 });
    expect(months.body.buckets.every((x: any) => x.start.endsWith('-01'))).toBe(true);
  });

  it('team-overview: members, active keys, gates, runs and documents of the period', async () => {
    const team = await flowWorkspace(app);
    const g = await createGate(app, team.key, { name: 'Team' });
    const stale = await createKey(app, team.user.accessToken);
    await app.services.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 day' WHERE id = $1`, [stale.id]);
    await app.syncCredentials();
    await app.request('POST', `/api/flow/gates/${g.id}/validate`, { token: team.key, body: {} });
    await insertDocumentJob(app.services.db, team.projectId, DAY);
    await insertDocumentJob(app.services.db, team.projectId, 50 * DAY);

    const res = await get('team-overview', team.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ period: '30d', members: 1, pendingInvitations: 0, apiKeys: 1, gates: 1, activeGates: 1, runs: 1, documents: 1 });
    expect((await get('team-overview?period=90d', team.key)).body.documents).toBe(2);
  });

  it('plans: the spec’s four plans with prices, allowances and limits', async () => {
    const res = await get('plans');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      plans: [
        { id: 'free', name: 'Free', monthlyPriceUsd: 0, annualPriceUsd: 0, runsPerMonth: 500, maxGates: 3, maxApproversPerGate: 5, retentionDays: 3, contentLimitChars: 50000, overagePerRunUsd: null },
        { id: 'starter', name: 'Starter', monthlyPriceUsd: 29, annualPriceUsd: 278.4, runsPerMonth: 10000, maxGates: null, maxApproversPerGate: 10, retentionDays: 5, contentLimitChars: 100000, overagePerRunUsd: 0.005 },
        { id: 'growth', name: 'Growth', monthlyPriceUsd: 99, annualPriceUsd: 950.4, runsPerMonth: 100000, maxGates: null, maxApproversPerGate: 25, retentionDays: 5, contentLimitChars: 200000, overagePerRunUsd: 0.004 },
        { id: 'scale', name: 'Scale', monthlyPriceUsd: 349, annualPriceUsd: 3350.4, runsPerMonth: 500000, maxGates: null, maxApproversPerGate: null, retentionDays: 5, contentLimitChars: 500000, overagePerRunUsd: 0.002 },
      ],
    });
  });

  it('credit-packs: one-time packs and recurring add-ons', async () => {
    const res = await get('credit-packs');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      packs: [
        { documents: 100, priceUsd: 15, pricePerDocumentUsd: 0.15, expires: false },
        { documents: 500, priceUsd: 50, pricePerDocumentUsd: 0.1, expires: false },
        { documents: 1000, priceUsd: 90, pricePerDocumentUsd: 0.09, expires: false },
        { documents: 2500, priceUsd: 200, pricePerDocumentUsd: 0.08, expires: false },
      ],
      addOns: [
        { documentsPerMonth: 500, priceUsdPerMonth: 19 },
        { documentsPerMonth: 2000, priceUsdPerMonth: 49 },
        { documentsPerMonth: 10000, priceUsdPerMonth: 119 },
      ],
    });
  });
});
