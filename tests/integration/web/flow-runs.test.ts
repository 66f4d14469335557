import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { createKey } from '../../support/api-keys';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitForRunStatus } from '../../support/approvals';
import { pdfText } from '../../support/rendering-pdf';
import { createTemplate, publish } from '../../support/templates';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Flow's runs and the approvals inbox in the dashboard (docs/web.md "Flow: runs and the approvals
 * inbox"): runs submitted through the API, the list filtered, a failing run's validation, a run
 * approved from the inbox with a comment, then its page: completed after a delivery retried, the
 * decision with who, when and the comment, the rendered PDF in the viewer, the deliveries' attempts.
 */
describe('Flow runs and approvals in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let ws: FlowWorkspace;
  let gate: any;
  let other: any;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // The receiver is on 127.0.0.1, which outbound requests refuse unless the operator allows it; short retry waits.
    ({ app, browser } = await startAppWithBrowser({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } }));
    ws = await flowWorkspace(app, 'growth');
    const template = await createTemplate(app, ws.user.accessToken);
    await publish(app, ws.user.accessToken, template.id);
    gate = await createGate(app, ws.key, {
      name: 'Purchase orders',
      schema: {
        type: 'object',
        properties: {
          customer: { type: 'string', required: true, minLength: 2 },
          items: { type: 'array', required: true, items: { type: 'object', properties: { label: { type: 'string', required: true }, amount: { type: 'number', min: 0 } } } },
        },
      },
      businessRules: [{ id: 'positive', name: 'Total above zero', expression: '$sum(items.amount) > 0', message: 'The total must be above zero' }],
      renderMode: 'native',
      renderTemplateId: template.id,
      approvalMode: 'manual',
      // The signed-in person is the approver.
      approvalConfig: { approvers: [{ email: ws.user.email, name: 'Ada Approver' }], timeoutMinutes: 600, onTimeout: 'reject' },
      deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/orders`, secret: 'flow-runs-test-secret' }],
    });
    other = await createGate(app, ws.key, { name: 'Notes' });
  });
  afterAll(async () => {
    await receiver?.stop();
    await closeAppWithBrowser(app, browser);
  });

  const submit = async (gateId: string, payload: unknown) => {
    const res = await app.request('POST', `/api/flow/gates/${gateId}/runs`, { token: ws.key, body: { payload } });
    expect(res.status).toBe(201);
    return res.body as { id: string; shortId: string; status: string; validation: any };
  };
  const rowsOf = (page: Page, table: string) =>
    page.$$eval(`table[aria-label="${table}"] tbody tr`, (rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent?.trim() ?? '')));
  const waitForRows = (page: Page, table: string, n: number) =>
    page.waitForFunction((t, count) => document.querySelectorAll(`table[aria-label="${t}"] tbody tr`).length === count, {}, table, n);
  const choose = async (page: Page, select: string, option: string) => {
    await byRole(page, 'combobox', select).click();
    await byRole(page, 'option', option).click();
  };
  /** Sets a date box as the browser's date picker does (an `input` event React hears). */
  const setDate = (page: Page, label: string, day: string) =>
    page.$eval(
      `aria/${label}`,
      (input, value) => {
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, value);
        input.dispatchEvent(new Event('input', { bubbles: true }));
      },
      day,
    );
  const localDay = (offset: number) => {
    const d = new Date();
    d.setDate(d.getDate() + offset);
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  };

  it('lists and filters runs, shows a failing run\'s validation, approves from the inbox and shows the run completed with its decision, document and deliveries', async () => {
    // Submitted through the API: one failing validation, one needing approval, one on another gate.
    const failing = await submit(gate.id, { customer: 'X', items: [{ label: 'Gear', amount: 5 }] });
    expect(failing.status).toBe('validation_failed');
    const problem = failing.validation.details[0];
    expect(problem).toMatchObject({ field: 'customer', code: 'MIN_LENGTH' });
    const approved = await submit(gate.id, { customer: 'Ada Lovelace', items: [{ label: 'Analytical engine', amount: 1843 }] });
    const note = await submit(other.id, { note: 'hello' });
    expect(note.status).toBe('completed');
    await waitForRunStatus(app, ws, approved.id, ['review_required'], 60_000);
    // Every delivery attempt of the approved run is refused until its manual retry.
    receiver.respondOn('/orders', [503, 503, 503, 503], 204);

    await withAppPage(browser, 'flow-runs', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, ws.user.email, ws.user.password);
      await byRole(page, 'link', 'Flow').click();
      await byRole(page, 'link', 'Runs').click();
      await byRole(page, 'heading', 'Runs').wait();
      await waitForRows(page, 'Runs', 3);
      expect((await rowsOf(page, 'Runs')).map((r) => [r[0], r[1], r[2]])).toEqual([
        [note.shortId, 'Notes', 'Completed'],
        [approved.shortId, 'Purchase orders', 'Waiting for approval'],
        [failing.shortId, 'Purchase orders', 'Validation failed'],
      ]);
      await expectWellBehaved(tab, app.url, 'the runs list');
      await keepScreenshot(page, 'flow-runs');

      // Filtered by status, as the API filters.
      await choose(page, 'Status', 'Validation failed');
      await waitForRows(page, 'Runs', 1);
      const byStatus = await app.request('GET', '/api/flow/runs?status=validation_failed', { token: ws.key });
      expect((await rowsOf(page, 'Runs')).map((r) => r[0])).toEqual(byStatus.body.data.map((r: any) => r.shortId));
      await byRole(page, 'button', 'Clear the filters').click();
      await waitForRows(page, 'Runs', 3);
      // By gate, by source, by day.
      await choose(page, 'Gate', 'Notes');
      await waitForRows(page, 'Runs', 1);
      expect((await rowsOf(page, 'Runs'))[0][0]).toBe(note.shortId);
      await byRole(page, 'button', 'Clear the filters').click();
      await waitForRows(page, 'Runs', 3);
      await choose(page, 'Source', 'MCP');
      await page.waitForFunction(() => document.body.textContent?.includes('No run matches these filters.'));
      await byRole(page, 'button', 'Clear the filters').click();
      await setDate(page, 'Created from', localDay(1));
      await page.waitForFunction(() => document.body.textContent?.includes('No run matches these filters.'));
      await setDate(page, 'Created from', localDay(0));
      await waitForRows(page, 'Runs', 3);
      await setDate(page, 'Created to', localDay(-1));
      await page.waitForFunction(() => document.body.textContent?.includes('No run matches these filters.'));
      await byRole(page, 'button', 'Clear the filters').click();
      await waitForRows(page, 'Runs', 3);

      // The failing run: its layer and error.
      await byRole(page, 'link', failing.shortId).click();
      await byRole(page, 'heading', `Run ${failing.shortId}`).wait();
      await waitForRegionText(page, 'Validation', problem.message);
      const steps = await rowsOf(page, 'Validation steps');
      expect(steps.map((s) => [s[0], s[1]])).toEqual([
        ['Schema layer', 'Failed'],
        [expect.stringContaining('Rule: Total above zero'), 'Skipped'],
      ]);
      expect(steps[0][2]).toContain('customer');
      expect(steps[0][2]).toContain('(MIN_LENGTH)');
      await waitForRegionText(page, 'Payload', 'Gear');
      await byRole(page, 'button', 'Show raw JSON').click();
      await waitForRegionText(page, 'Payload', '"customer": "X"');
      expect(await page.$('aria/Document[role="region"]')).toBeNull();
      await expectWellBehaved(tab, app.url, 'a failing run');

      // The run waiting for approval: who is asked until when; the approvers e-mailed again.
      await byRole(page, 'link', 'All runs').click();
      await byRole(page, 'link', approved.shortId).click();
      await byRole(page, 'heading', `Run ${approved.shortId}`).wait();
      await waitForRegionText(page, 'Approvals', 'Waiting');
      expect((await rowsOf(page, 'Decisions'))[0]).toEqual([expect.stringContaining(ws.user.email), 'Waiting', expect.stringMatching(/^until /), 'none']);
      await byRole(page, 'button', 'E-mail the approvers again').click();
      await waitForRegionText(page, 'Approvals', 'A fresh link went to 1 of 1 approver');
      // Two magic links to the approver now: the first, and the fresh one (whatever the e-mails' wording).
      await waitFor(() => app.smtp!.messages.filter((m) => m.to.includes(ws.user.email) && m.text.includes('/review?token=')).length === 2 || undefined, { what: 'a second approval link' });
      await expectWellBehaved(tab, app.url, 'a run waiting for approval');

      // The inbox: the pending approval with its gate, run, summary and deadline; approved with a comment.
      await byRole(page, 'link', 'Approvals').click();
      await byRole(page, 'heading', 'Approvals').wait();
      const card = `Approval of run ${approved.shortId}`;
      await byRole(page, 'article', card).wait();
      const cardText = await page.$eval(`aria/${card}[role="article"]`, (el) => el.textContent ?? '');
      expect(cardText).toContain('Purchase orders');
      // The summary's first plain fields (in the stored order: Postgres orders an object's keys by length).
      expect(cardText).toMatch(/Summary.*customer: Ada Lovelace/);
      expect(cardText).toMatch(/Summary.*items: 1 item/);
      expect(cardText).toMatch(/Deadline.*\(in 10 hours\)/);
      await byRole(page, 'textbox', 'Comment').fill('Checked against the order, send it.');
      await expectWellBehaved(tab, app.url, 'the approvals inbox');
      await keepScreenshot(page, 'flow-approvals');
      await byRole(page, 'button', 'Approve').click();
      await page.waitForFunction(() => document.body.textContent?.includes('Nothing waits for your decision.'));
      await waitForRegionText(page, 'Decided', 'Checked against the order, send it.');
      expect((await rowsOf(page, 'Your decisions')).map((r) => [r[0], r[1], r[2]])).toEqual([[approved.shortId, 'Purchase orders', 'Approved']]);
      const [decision] = (await app.request('GET', `/api/flow/runs/${approved.id}/approvals`, { token: ws.key })).body.data;
      expect(decision).toMatchObject({ approverEmail: ws.user.email, approverName: 'Ada Approver', status: 'approved', comment: 'Checked against the order, send it.', decidedAt: expect.any(String) });
      await expectWellBehaved(tab, app.url, 'a decision');

      // The run's page: the delivery refused four times, so the run failed; "Retry" delivers it and the run completes.
      await byRole(page, 'link', approved.shortId).click();
      await byRole(page, 'heading', `Run ${approved.shortId}`).wait();
      await byRole(page, 'button', `Retry the delivery to ${receiver.url}/orders`).wait();
      await waitForRegionText(page, 'Deliveries', 'Failed');
      expect((await rowsOf(page, `Attempts to ${receiver.url}/orders`)).map((r) => r[2])).toEqual(['503', '503', '503', '503']);
      await byRole(page, 'button', `Retry the delivery to ${receiver.url}/orders`).click();
      await page.waitForFunction((el) => el.textContent === 'Completed', {}, await byRole(page, 'status', 'Run status').waitHandle());
      await waitForRegionText(page, 'Deliveries', 'Delivered');
      await page.waitForFunction((t) => document.querySelectorAll(`table[aria-label="${t}"] tbody tr`).length === 5, {}, `Attempts to ${receiver.url}/orders`);
      expect((await rowsOf(page, `Attempts to ${receiver.url}/orders`)).map((r) => r[2])).toEqual(['503', '503', '503', '503', '204']);
      expect(await page.$('aria/Retry the delivery to ' + receiver.url + '/orders[role="button"]')).toBeNull();
      // The decision: who, when, the comment.
      const decisions = await rowsOf(page, 'Decisions');
      const decidedAt = await page.evaluate((iso) => new Date(iso).toLocaleString(), decision.decidedAt as string);
      expect(decisions).toEqual([[expect.stringContaining('Ada Approver'), 'Approved', decidedAt, 'Checked against the order, send it.']]);
      expect(decisions[0][0]).toContain(ws.user.email);
      // The rendered PDF in the viewer, read through the API.
      await waitForRegionText(page, 'Document', 'Dear Ada Lovelace');
      await waitForRegionText(page, 'Document', 'Analytical engine');
      await expectWellBehaved(tab, app.url, 'an approved run');
      await page.evaluate(() => window.scrollTo(0, 0));
      await keepScreenshot(page, 'flow-run');
      await page.$eval('aria/Deliveries[role="region"]', (el) => el.scrollIntoView());
      await keepScreenshot(page, 'flow-run-deliveries');
      const run = await waitForRunStatus(app, ws, approved.id, ['completed']);
      expect(run).toMatchObject({ approvalStatus: 'approved', deliveryStatus: 'completed', error: null });
      const deliveries = (await app.request('GET', `/api/flow/runs/${approved.id}/deliveries`, { token: ws.key })).body.data;
      expect(deliveries.map((d: any) => [d.status, d.attempts.map((a: any) => a.statusCode)])).toEqual([['completed', [503, 503, 503, 503, 204]]]);
    });
  });

  it('answers the pages\' API: a run\'s artefact and approvals, days of the runs list, decided approvals', async () => {
    const pending = await submit(gate.id, { customer: 'Grace Hopper', items: [{ label: 'Compiler', amount: 1952 }] });
    await waitForRunStatus(app, ws, pending.id, ['review_required'], 60_000);
    // The artefact from this origin: the PDF's bytes (read_runs for a key, like the payload).
    const file = await fetch(`${app.url}/api/flow/runs/${pending.shortId}/artefact`, { headers: { Authorization: `Bearer ${ws.key}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(await pdfText(Buffer.from(await file.arrayBuffer()))).toContain('Dear Grace Hopper');
    const narrow = await createKey(app, ws.user.accessToken, { name: 'no payloads', permissions: { read_templates: true } });
    expect((await app.request('GET', `/api/flow/runs/${pending.id}/artefact`, { token: narrow.plainKey })).status).toBe(403);
    const note = await submit(other.id, { note: 'no document' });
    const none = await app.request('GET', `/api/flow/runs/${note.id}/artefact`, { token: ws.key });
    expect([none.status, none.body.code]).toEqual([404, 'ERR_FILE_001']);
    // A run's approvals: pending, with its deadline; readable with any key of the workspace.
    const asked = await app.request('GET', `/api/flow/runs/${pending.id}/approvals`, { token: narrow.plainKey });
    expect(asked.body.data).toEqual([expect.objectContaining({ runId: pending.id, status: 'pending', decidedAt: null, comment: null, expiresAt: expect.any(String), gateName: 'Purchase orders' })]);
    // Days: from is inclusive, to exclusive; a bad date is refused.
    const created = new Date((await app.request('GET', `/api/flow/runs/${pending.id}`, { token: ws.key })).body.createdAt);
    const between = async (from: Date, to: Date) =>
      (await app.request('GET', `/api/flow/runs?from=${from.toISOString()}&to=${to.toISOString()}&limit=100`, { token: ws.key })).body.data.map((r: any) => r.id);
    expect(await between(created, new Date(created.getTime() + 1))).toContain(pending.id);
    expect(await between(new Date(created.getTime() - 60_000), created)).not.toContain(pending.id);
    // Hostile values are refused with the catalogued code, never reach the database.
    for (const q of ['from=yesterday', 'from=-271821-04-20T00:00:00.000Z', 'to=%2B275760-09-13T00:00:00.000Z', 'from=2026-01-01&from=2026-02-01', `to=${'9'.repeat(10_000)}`, 'status=completed&status=failed', "source=rest'--"]) {
      const refused = await app.request('GET', `/api/flow/runs?${q}`, { token: ws.key });
      expect([q, refused.status, refused.body.code]).toEqual([q, 400, 'ERR_VALID_001']);
    }
    // Decided approvals of the caller, latest first; pending ones by default.
    const as = { token: ws.user.accessToken, headers: { 'X-Team-Id': ws.projectId } };
    const mine = await app.request('GET', '/api/flow/approvals', as);
    expect(mine.body.data.map((a: any) => a.runId)).toContain(pending.id);
    expect(mine.body.data.map((a: any) => a.status)).toEqual(mine.body.data.map(() => 'pending'));
    const reject = await app.request('POST', `/api/flow/approvals/${asked.body.data[0].id}/reject`, { ...as, body: { comment: 'Not this one' } });
    expect(reject.body).toEqual({ success: true, decision: 'rejected' });
    const decided = await app.request('GET', '/api/flow/approvals?status=decided', as);
    expect(decided.body.data[0]).toMatchObject({ runId: pending.id, status: 'rejected', comment: 'Not this one', decidedAt: expect.any(String) });
    expect(decided.body.data.map((a: any) => a.status)).toEqual(decided.body.data.map(() => expect.stringMatching(/^(approved|rejected|expired)$/)));
    expect((await app.request('GET', '/api/flow/approvals', as)).body.data.map((a: any) => a.runId)).not.toContain(pending.id);
    for (const q of ['status=all', 'status=pending&status=decided', 'limit=1000', 'page=0']) {
      const refused = await app.request('GET', `/api/flow/approvals?${q}`, as);
      expect([q, refused.status, refused.body.code]).toEqual([q, 400, 'ERR_VALID_001']);
    }
  });
});
