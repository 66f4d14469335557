import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { chooseRadio, duration, rate, regionOf, STATUS_WORDS, tableRows, waitForRows } from '../../support/analytics-page';
import { waitForRunStatus } from '../../support/approvals';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { waitForJob } from '../../support/documents';
import { createGate, flowWorkspace, invoiceRules, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { DAY, insertRun } from '../../support/flow-analytics';
import { createTemplate, publish } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * Flow analytics in the dashboard (docs/web.md "Flow analytics"): a gate with a schema and a rule and
 * a gate with an approver, runs submitted through the API (two completed, three failing validation, two
 * of them on the field `customer`, one failing the rule, one approved by its approver) and a document
 * generated; an older run (20 days ago) so the periods differ. The page shows every view; each figure
 * read from the page (the charts' hidden figures, the visible tables and figures) equals what the API
 * answers for the same period; switching the period and the granularity asks the API again with them
 * and shows its new figures.
 */
describe('Flow analytics in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let ws: FlowWorkspace;
  let invoices: any;
  let contracts: any;

  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser());
    ws = await flowWorkspace(app);
    invoices = await createGate(app, ws.key, { name: 'Invoices', schema: invoiceSchema, businessRules: invoiceRules });
    contracts = await createGate(app, ws.key, {
      name: 'Contracts',
      approvalMode: 'manual',
      approvalConfig: { approvers: [{ email: ws.user.email, name: 'Owner' }], timeoutMinutes: 120, onTimeout: 'reject' },
    });
    const submit = async (gate: any, payload: unknown) => {
      const res = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload } });
      if (res.status !== 201) throw new Error(`run failed: ${res.status} ${res.text}`);
      return res.body;
    };
    const good = { customer: 'Ada', items: [{ price: 10, qty: 2 }] };
    expect((await submit(invoices, good)).status).toBe('completed');
    expect((await submit(invoices, good)).status).toBe('completed');
    expect((await submit(invoices, { items: [{ price: 10, qty: 1 }] })).status).toBe('validation_failed');
    expect((await submit(invoices, { customer: 'A', items: [{ price: 10, qty: 1 }] })).status).toBe('validation_failed');
    expect((await submit(invoices, { customer: 'Ada', items: [{ price: 0, qty: 1 }] })).status).toBe('validation_failed');

    // A run the owner approves, as the gate's approver, with their own session.
    const reviewed = await submit(contracts, { customer: 'Bo', amount: 42 });
    await waitForRunStatus(app, ws, reviewed.id, ['review_required']);
    const asOwner = { token: ws.user.accessToken, headers: { 'X-Team-Id': ws.projectId } };
    const approval = await waitFor(async () => (await app.request('GET', '/api/flow/approvals', asOwner)).body.data?.[0], { what: 'the approval' });
    const decided = await app.request('POST', `/api/flow/approvals/${approval.id}/approve`, { ...asOwner, body: { comment: 'Fine' } });
    expect([decided.status, decided.body]).toEqual([200, { success: true, decision: 'approved' }]);
    await waitForRunStatus(app, ws, reviewed.id, ['completed']);

    // An older run (the API cannot backdate one): in the last 30 days, not the last 7.
    await insertRun(app.services.db, { projectId: ws.projectId, gateId: invoices.id, status: 'completed', agoMs: 20 * DAY, durationMs: 1500 });

    // A document of the workspace, generated through the API.
    const template = await createTemplate(app, ws.user.accessToken, { name: 'Letters' });
    await publish(app, ws.user.accessToken, template.id);
    const generated = await app.request('POST', '/api/documents/generate', { token: ws.key, body: { templateId: template.id, format: 'pdf', variables: { customer: 'Ada' } } });
    expect(generated.status).toBe(201);
    expect((await waitForJob(app, ws.key, generated.body.jobId)).status).toBe('completed');
  });
  afterAll(() => closeAppWithBrowser(app, browser));

  const api = async (path: string) => {
    const res = await app.request('GET', path, { token: ws.key });
    expect([path, res.status]).toEqual([path, 200]);
    return res.body;
  };
  const flow = (view: string, query = '') => api(`/api/flow/analytics/${view}${query ? `?${query}` : ''}`);
  /** Midnight UTC, days − 1 days ago: the start of the period the page asks the document analytics for. */
  const periodStart = (days: number) => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1))).toISOString();
  };

  /** Every view's figures on the page equal the API's answers for `period` and `granularity`. */
  async function expectFigures(page: Page, period: string, granularity: string) {
    const q = `period=${period}`;
    const [overview, throughput, outcomes, errors, gates, approvals, infra, timeline, team, billing, plans, packs] = await Promise.all([
      flow('overview', q),
      flow('throughput', `${q}&granularity=${granularity}`),
      flow('run-outcomes', q),
      flow('validation-errors', q),
      flow('gate-metrics', q),
      flow('approval-metrics', q),
      flow('infra-health', q),
      flow('combined-timeline', `${q}&granularity=${granularity}`),
      flow('team-overview', q),
      flow('billing-summary'),
      flow('plans'),
      flow('credit-packs'),
    ]);
    const documents = await api(`/api/documents/analytics?startDate=${encodeURIComponent(periodStart(Number(period.slice(0, -1))))}`);

    // Charts: their figures as a screen reader reads them.
    await waitForRows(page, 'Runs over time (figures)', throughput.buckets.map((b: any) => [b.start, b.runs, b.completed, b.failed, b.validationFailed]));
    await waitForRows(page, 'Run outcomes (figures)', STATUS_WORDS.map(([status, words]) => [words, outcomes.byStatus[status]]));
    await waitForRows(page, 'Runs by source (figures)', [['API', outcomes.bySource.rest], ['MCP', outcomes.bySource.mcp]]);
    await waitForRows(page, 'Validation errors by field (figures)', errors.byField.map((f: any) => [f.field, f.count]));
    await waitForRows(page, 'Approval requests (figures)', [
      ['Requested', approvals.requested],
      ['Approved', approvals.approved],
      ['Rejected', approvals.rejected],
      ['Expired', approvals.expired],
      ['Pending', approvals.pending],
    ]);
    await waitForRows(page, 'Documents and runs over time (figures)', timeline.buckets.map((b: any) => [b.start, b.documents, b.runs]));
    await waitForRows(
      page,
      'Documents per template (figures)',
      documents.byTemplate.map((t: any) => [t.templateName, t.total, t.completed, t.failed, `${Math.round(t.successRate * 10) / 10}%`]),
    );
    // Tables: gate metrics (the last run's time is written in the browser's locale, left out), codes, circuits, prices.
    await waitForRows(page, 'Errors by code', errors.byCode.map((c: any) => [c.code, c.count]));
    const gateRows = await tableRows(page, 'Runs per gate');
    expect(gateRows.map((r) => r.slice(0, 7))).toEqual(gates.gates.map((g: any) => [g.name, g.status, g.runs, g.completed, g.failed, g.validationFailed, rate(g.successRate)].map(String)));
    expect((await tableRows(page, 'Circuit of each gate')).map((r) => [r[0], r[2], r[3]])).toEqual(infra.circuitBreakers.map((c: any) => [c.name, 'Closed', String(c.consecutiveFailures)]));
    expect((await tableRows(page, 'Plans on offer')).map((r) => [r[0].replace(' Your plan', ''), r[3]])).toEqual(plans.plans.map((p: any) => [p.name, p.runsPerMonth.toLocaleString('en')]));
    expect((await tableRows(page, 'Credit packs on offer')).map((r) => r[0])).toEqual(packs.packs.map((p: any) => p.documents.toLocaleString('en')));
    // Figures.
    const figures: Array<[string, string]> = [
      ['Total runs', String(overview.totals.runs)],
      ['Runs completed', String(overview.totals.completed)],
      ['Success rate', rate(overview.successRate)],
      ['Validation pass rate', rate(overview.validationPassRate)],
      ['Average time to complete', duration(overview.avgTimeToCompleteMs)],
      ['Approval rate', rate(approvals.approvalRate)],
      ['Median time to decide', duration(approvals.medianDecisionMs)],
      ['Deliveries', String(infra.deliveries.total)],
      ['Render failures', String(infra.renderFailures)],
      ['Documents', String(documents.totalDocuments)],
      ['Documents completed', String(documents.completedDocuments)],
      ['Members', String(team.members)],
      ['Gates', String(team.gates)],
      ['Runs in the period', String(team.runs)],
      ['Documents in the period', String(team.documents)],
    ];
    for (const [label, value] of figures) {
      // The value follows the label; a note may follow it.
      expect([label, (await regionOf(page, label)).startsWith(`${label}${value}`)]).toEqual([label, true]);
    }
    const bar = await byRole(page, 'progressbar', 'Runs used this month').waitHandle();
    expect(await bar.evaluate((el) => [el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemax')])).toEqual([String(billing.runsThisMonth), String(billing.runsIncluded)]);
    return { overview, throughput, errors, approvals, timeline };
  }

  /** The page asked `view` with these query parameters (the last such request). */
  const asked = (requests: string[], view: string) =>
    requests
      .map((u) => new URL(u))
      .filter((u) => u.pathname === `/api/flow/analytics/${view}`)
      .map((u) => Object.fromEntries(u.searchParams))
      .at(-1);

  it('shows every view with the API’s figures, and the period and granularity change what is asked and shown', async () => {
    await withAppPage(browser, 'flow-analytics', async (tab) => {
      const { page, requests } = tab;
      await signInThroughApp(page, app.url, ws.user.email, ws.user.password);
      await byRole(page, 'link', 'Flow').click();
      await byRole(page, 'link', 'Analytics').click();
      await byRole(page, 'heading', 'Analytics').wait();
      expect(new URL(page.url()).pathname).toBe('/flow/analytics');

      // The default: the last 30 days, per day.
      await waitForRegionText(page, 'Total runs', 'Total runs');
      const month = await expectFigures(page, '30d', 'day');
      expect(month.overview.totals).toMatchObject({ runs: 7, completed: 4, validationFailed: 3 });
      expect(month.throughput.buckets).toHaveLength(30);
      // The named field failed twice (missing, too short), the rule once.
      expect(month.errors.byField).toEqual(expect.arrayContaining([{ field: 'customer', count: 2 }, { field: 'total', count: 1 }]));
      expect(month.approvals).toMatchObject({ requested: 1, approved: 1, approvalRate: 100 });
      expect(month.timeline.totals).toEqual({ documents: 1, runs: 7 });
      expect(asked(requests, 'throughput')).toEqual({ period: '30d', granularity: 'day' });
      const summary = await page.$eval('aria/Runs over time[role="region"]', (r) => r.querySelector('[role="img"]')?.getAttribute('aria-label'));
      expect(summary).toMatch(/^Bar chart of runs per day: 7 over 30 days, most on .+ \(6\)\.$/);
      // The charts are drawn (their pictures are kept below and looked at).
      for (const chart of ['Runs over time', 'Run outcomes', 'Validation errors by field', 'Approval requests', 'Documents and runs over time', 'Documents per template']) {
        const height = await page.$eval(`aria/${chart}[role="region"]`, (r) => Math.max(0, ...Array.from(r.querySelectorAll('[role="img"] svg')).map((svg) => svg.getBoundingClientRect().height)));
        expect([chart, height > 80]).toEqual([chart, true]);
      }
      await expectWellBehaved(tab, app.url, 'flow analytics');
      await keepScreenshot(page, 'flow-analytics');
      await page.setViewport({ width: 1280, height: 3600 });
      await keepScreenshot(page, 'flow-analytics-whole');
      await page.setViewport({ width: 1280, height: 900 });

      // The last 7 days: the older run is left out.
      await chooseRadio(page, 'Last 7 days');
      await page.waitForFunction(() => new URL(location.href).searchParams.get('period') === '7d');
      await waitForRegionText(page, 'Total runs', 'Total runs6');
      const week = await expectFigures(page, '7d', 'day');
      expect(week.overview.totals.runs).toBe(6);
      expect(week.throughput.buckets).toHaveLength(7);
      expect(asked(requests, 'throughput')).toEqual({ period: '7d', granularity: 'day' });
      expect(asked(requests, 'overview')).toEqual({ period: '7d' });
      expect(asked(requests, 'combined-timeline')).toEqual({ period: '7d', granularity: 'day' });

      // Per week: the same runs in one or two week buckets.
      await chooseRadio(page, 'Week');
      const weekly = await expectFigures(page, '7d', 'week');
      expect(asked(requests, 'throughput')).toEqual({ period: '7d', granularity: 'week' });
      expect(asked(requests, 'combined-timeline')).toEqual({ period: '7d', granularity: 'week' });
      expect(weekly.throughput.buckets.length).toBeLessThanOrEqual(2);
      expect(weekly.throughput.buckets.reduce((n: number, b: any) => n + b.runs, 0)).toBe(6);
      const weeklySummary = await page.$eval('aria/Runs over time[role="region"]', (r) => r.querySelector('[role="img"]')?.getAttribute('aria-label'));
      expect(weeklySummary).toMatch(/^Bar chart of runs per week: 6 over [12] weeks?, most in Week of .+ \(\d\)\.$/);
      expect(new URL(page.url()).search).toBe('?period=7d&granularity=week');
      await expectWellBehaved(tab, app.url, 'flow analytics, last 7 days per week');
      await keepScreenshot(page, 'flow-analytics-7-days-weekly');

      // One gate: the gate-scoped views ask for it.
      await byRole(page, 'combobox', 'Gate').click();
      await byRole(page, 'option', 'Contracts').click();
      await waitForRows(page, 'Approval requests (figures)', [['Requested', 1], ['Approved', 1], ['Rejected', 0], ['Expired', 0], ['Pending', 0]]);
      await waitForRegionText(page, 'Total runs', 'Total runs1');
      expect(asked(requests, 'overview')).toEqual({ period: '7d', gateId: contracts.id });
      const gateRows = await tableRows(page, 'Runs per gate');
      expect(gateRows.map((r) => r[0])).toEqual(['Contracts']);
      // The whole page on a phone's width, to be looked at.
      await page.setViewport({ width: 375, height: 6000 });
      await waitForRegionText(page, 'Run outcomes', 'Completed');
      await keepScreenshot(page, 'flow-analytics-phone-whole');
    });
  });
  it('a workspace without runs, on a phone: every view says so, nothing breaks', async () => {
    const empty = await flowWorkspace(app);
    await withAppPage(browser, 'flow-analytics-empty', async (tab) => {
      const { page } = tab;
      await page.setViewport({ width: 375, height: 900 });
      await signInThroughApp(page, app.url, empty.user.email, empty.user.password);
      await page.waitForFunction(() => location.pathname !== '/sign-in');
      await page.goto(`${app.url}/flow/analytics?period=90d&granularity=month`);
      await waitForRegionText(page, 'Run outcomes', 'No run in this period.');
      expect((await regionOf(page, 'Total runs')).startsWith('Total runs0')).toBe(true);
      expect((await regionOf(page, 'Success rate')).startsWith('Success rate—')).toBe(true);
      await waitForRegionText(page, 'Gate metrics', 'No gate yet.');
      const months = (await flow('throughput', 'period=90d&granularity=month')).buckets;
      await waitForRows(page, 'Runs over time (figures)', months.map((b: any) => [b.start, 0, 0, 0, 0]));
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await expectWellBehaved(tab, app.url, 'flow analytics, empty, phone');
      await keepScreenshot(page, 'flow-analytics-empty-phone');
    });
  });
});
