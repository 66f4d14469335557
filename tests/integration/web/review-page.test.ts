import type { Browser, Page } from 'puppeteer';
import { deadlineText } from '../../../domain/flow/approval-emails';
import { approvalMail, approverEmail, magicToken, manualGate, runOf, submit, waitForRunStatus } from '../../support/approvals';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { createTemplate, publish } from '../../support/templates';

/**
 * The reviewer's page (docs/web.md "The reviewer's page"): a gate that renders a PDF and needs an
 * e-mailed approver; a run submitted through the API; the approval e-mail (gate, run, summary,
 * deadline) fetched as a mail scanner would (nothing changes), then opened on a phone-sized screen
 * in another time zone: the document's pages, the summary under the schema's titles, the raw JSON,
 * "Approve" with a comment, the confirmation, and the run completed with that decision. The owner's
 * notice links to the run's page. A used link and an expired (replaced) one say so and send a new one.
 */
describe("the reviewer's page", () => {
  let app: TestApp;
  let browser: Browser;
  let ws: FlowWorkspace;
  let templateId: string;
  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser());
    ws = await flowWorkspace(app, 'growth');
    const template = await createTemplate(app, ws.user.accessToken);
    await publish(app, ws.user.accessToken, template.id);
    templateId = template.id;
  });
  afterAll(() => closeAppWithBrowser(app, browser));

  const schema = {
    type: 'object',
    properties: {
      customer: { type: 'string', required: true, title: 'Customer name', description: 'Who the invoice is for' },
      dueDate: { type: 'string', format: 'date', title: 'Due date' },
      signedAt: { type: 'string', format: 'date-time', title: 'Signed at' },
      address: { type: 'object', title: 'Billing address', properties: { city: { type: 'string', title: 'City' }, postCode: { type: 'string' } } },
      items: {
        type: 'array',
        title: 'Invoice lines',
        items: { type: 'object', properties: { label: { type: 'string', title: 'Item' }, amount: { type: 'number', title: 'Amount (EUR)' } } },
      },
    },
  };
  const payload = {
    customer: 'Ada Lovelace',
    dueDate: '2026-12-24',
    signedAt: '2026-11-29T12:00:00Z',
    address: { city: 'London', postCode: 'W1' },
    items: [
      { label: 'Analytical engine', amount: 1200 },
      { label: 'Punched cards', amount: 35.5 },
    ],
  };

  const onPhone = async (page: Page) => {
    await page.setViewport({ width: 375, height: 812 });
    // The reviewer is in New York: dates are shown in the browser's zone.
    await page.emulateTimezone('America/New_York');
  };
  const noHorizontalScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  const linkIn = (text: string) => /https?:\/\/\S+\/review\?token=\S+/.exec(text)![0];

  it('e-mails the approver what to decide, shows the document and the summary on a phone, approves with a comment', async () => {
    const email = approverEmail();
    const gate = await createGate(app, ws.key, {
      name: 'Invoice approval',
      schema,
      renderMode: 'native',
      renderTemplateId: templateId,
      renderConfig: { format: 'pdf' },
      approvalMode: 'manual',
      approvalConfig: { approvers: [{ email, name: 'Grace' }], timeoutMinutes: 600, onTimeout: 'reject' },
      notificationMode: 'immediate',
    });
    const submitted = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload } });
    expect(submitted.status).toBe(201);
    const runId = submitted.body.id as string;
    const run = await runOf(app, ws, runId);

    // The approval e-mail: the gate, the run, a one-line summary under the schema's titles, the deadline.
    const mail = await approvalMail(app, email);
    const [approval] = await app.services.db.query(`SELECT id, magic_token_hash, magic_token_expires_at FROM flow_approvals WHERE run_id = $1`, [runId]);
    expect(mail.subject).toBe('Approval needed for Invoice approval');
    expect(mail.text).toContain(`"Invoice approval" (run ${run.shortId})`);
    expect(mail.text).toContain('Summary: Customer name: Ada Lovelace · Due date: 2026-12-24 · Signed at: 2026-11-29T12:00:00Z · Invoice lines: 2');
    expect(mail.text).toContain(`Decide by ${deadlineText(new Date(approval.magic_token_expires_at))}.`);
    const link = linkIn(mail.text);

    // The owner's notice links to the run's page in the dashboard.
    const notice = await app.smtp!.waitForMessage((m) => m.to.includes(ws.user.email) && m.subject === `Run ${run.shortId} needs review`);
    expect(notice.text).toContain(`${app.url}/flow/runs/${runId}`);
    expect(notice.html).toContain(`href="${app.url}/flow/runs/${runId}"`);

    // A mail scanner fetches the link, as a page and as anything: the app's page, whose <noscript>
    // names the page without script; nothing changes (the link is neither used nor replaced).
    for (const accept of ['text/html', '*/*']) {
      const res = await fetch(link, { headers: { Accept: accept } });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain(`/no-script/review?token=${encodeURIComponent(magicToken(mail))}`);
    }
    expect((await fetch(link.replace('/review?', '/no-script/review?'))).status).toBe(200);
    const [unchanged] = await app.services.db.query(`SELECT magic_token_hash, status FROM flow_approvals WHERE id = $1`, [approval.id]);
    expect(unchanged).toEqual({ magic_token_hash: approval.magic_token_hash, status: 'pending' });
    const [{ n: sessions }] = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_review_tokens WHERE email = $1`, [email]);
    expect(sessions).toBe(0);
    const [{ used }] = await app.services.db.query(`SELECT bool_or(used_at IS NOT NULL) AS used FROM flow_review_links WHERE approval_id = $1`, [approval.id]);
    expect(used).toBe(false);

    await withAppPage(browser, 'review-approve', async (tab) => {
      const { page } = tab;
      await onPhone(page);
      await page.goto(link);
      await byRole(page, 'heading', 'Confirm your e-mail address').wait();
      await expectWellBehaved(tab, app.url, 'the e-mail step');
      await byRole(page, 'textbox', 'Your e-mail address').fill(email);
      await byRole(page, 'button', 'Continue').click();

      // The document's pages, their text from the PDF the run rendered.
      await waitForRegionText(page, 'Document', 'Dear Ada Lovelace');
      expect(await regionText(page, 'Document')).toContain('Analytical engine');
      await byRole(page, 'group', 'Page 1 of 1').wait();
      // The link left the address bar: it was used.
      expect(page.url()).not.toContain('token=');

      // The summary: the schema's titles, nested objects and lists readable, dates in the reader's zone.
      const summary = await regionText(page, 'Summary');
      for (const label of ['Customer name', 'Who the invoice is for', 'Ada Lovelace', 'Due date', 'December 24, 2026', 'Signed at', 'Billing address', 'City', 'London', 'Post code', 'Invoice lines (2)', 'Item', 'Amount (EUR)', '1,200', '35.5']) {
        expect(summary).toContain(label);
      }
      expect(summary).toMatch(/Nov 29, 2026, 07:00\sAM EST/);
      expect(summary).not.toContain('2026-11-29T12:00:00Z');
      await waitForText(page, 'America/New_York');
      expect(await page.evaluate(() => document.body.textContent)).toContain('Run ' + run.shortId);
      await byRole(page, 'button', 'Show the raw JSON').click();
      expect(JSON.parse(await regionText(page, 'Raw JSON'))).toEqual(payload);
      await byRole(page, 'button', 'Hide the raw JSON').click();
      expect(await noHorizontalScroll(page)).toBe(true);
      await expectWellBehaved(tab, app.url, "the reviewer's page");
      await page.evaluate(() => window.scrollTo(0, 0));
      await keepScreenshot(page, 'review-phone');
      await page.screenshot({ path: `${process.env.FORMWORK_TEST_OUTPUT ?? 'test-output'}/pages/review-phone-full.png`, fullPage: true });

      await byRole(page, 'textbox', 'Comment (optional)').fill('Amounts checked against the order');
      await byRole(page, 'button', 'Approve').click();
      await waitForText(page, 'Your decision is recorded');
      const confirmed = await page.evaluate(() => document.body.textContent ?? '');
      expect(confirmed).toContain(`You approved run ${run.shortId} of Invoice approval`);
      expect(confirmed).toContain('Amounts checked against the order');
      expect(await noHorizontalScroll(page)).toBe(true);
      await expectWellBehaved(tab, app.url, 'the confirmation');
      await keepScreenshot(page, 'review-phone-approved');
      // The review token never reached the page's storage or script.
      expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([0, 0, '']);
    });

    // The run completed with the decision and the comment.
    const done = await waitForRunStatus(app, ws, runId, ['completed']);
    expect(done.approvalStatus).toBe('approved');
    const [decided] = await app.services.db.query(`SELECT status, comment, decided_at FROM flow_approvals WHERE id = $1`, [approval.id]);
    expect(decided).toMatchObject({ status: 'approved', comment: 'Amounts checked against the order' });
    // The gate's owner sees it in the run's page in the app: completed, the decision, who made it, the comment.
    await withAppPage(browser, 'review-run-detail', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, ws.user.email, ws.user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await page.goto(`${app.url}/flow/runs/${runId}`);
      await page.waitForFunction((el) => el.textContent === 'Completed', {}, await byRole(page, 'status', 'Run status').waitHandle());
      await waitForRegionText(page, 'Approvals', 'Amounts checked against the order');
      const approvals = await regionText(page, 'Approvals');
      expect(approvals).toContain(email);
      expect(approvals.toLowerCase()).toContain('approved');
      await expectWellBehaved(tab, app.url, 'the decided run');
    });

    // The link now says the approval was decided, and offers nothing more.
    await withAppPage(browser, 'review-decided-link', async ({ page }) => {
      await onPhone(page);
      await page.goto(link);
      await byRole(page, 'heading', 'This approval was already decided').wait();
      await waitForText(page, 'It was approved on');
      expect(await page.$('aria/Send me a new link[role="button"]')).toBeNull();
    });
  });

  it('a used link and an expired one say so and send a new link', async () => {
    const email = approverEmail();
    const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 600, onTimeout: 'reject' });
    const runId = await submit(app, ws, gate);
    const first = linkIn((await approvalMail(app, email)).text);

    // The link opens one session; opened again in the same browser, it goes on with that session.
    await withAppPage(browser, 'review-first-open', async ({ page }) => {
      await onPhone(page);
      await page.goto(first);
      await byRole(page, 'textbox', 'Your e-mail address').fill(email);
      await byRole(page, 'button', 'Continue').click();
      await byRole(page, 'region', 'Summary').wait();
      await waitForRegionText(page, 'Document', 'This run has no rendered document');
      await page.goto(first);
      await byRole(page, 'heading', 'This link was already used').wait();
      await byRole(page, 'link', 'Continue the review opened in this browser').click();
      await byRole(page, 'button', 'Approve').wait();
    });

    // Opened again (another device): used; a new link is sent on request.
    await withAppPage(browser, 'review-used-link', async (tab) => {
      const { page } = tab;
      await onPhone(page);
      await page.goto(first);
      await byRole(page, 'heading', 'This link was already used').wait();
      await expectWellBehaved(tab, app.url, 'a used link');
      await byRole(page, 'textbox', 'Your e-mail address').fill(email);
      await byRole(page, 'button', 'Send me a new link').click();
      await waitForText(page, 'A new link is on its way');
    });
    const second = linkIn((await approvalMail(app, email, 2)).text);
    expect(second).not.toBe(first);

    // The owner sends the links again: the second one is replaced, so it has expired.
    const resent = await app.request('POST', `/api/flow/approvals/resend/${runId}`, { token: ws.key });
    expect(resent.status).toBe(200);
    await approvalMail(app, email, 3);
    await withAppPage(browser, 'review-expired-link', async (tab) => {
      const { page } = tab;
      await onPhone(page);
      await page.goto(second);
      await byRole(page, 'heading', 'This link has expired').wait();
      await waitForText(page, 'A newer link was sent');
      expect(await noHorizontalScroll(page)).toBe(true);
      await expectWellBehaved(tab, app.url, 'an expired link');
      await keepScreenshot(page, 'review-link-expired');
      await byRole(page, 'textbox', 'Your e-mail address').fill(email);
      await byRole(page, 'button', 'Send me a new link').click();
      await waitForText(page, 'A new link is on its way');
    });
    const fourth = magicToken(await approvalMail(app, email, 4));
    expect((await app.request('POST', '/api/flow/review/link', { body: { token: fourth } })).body).toMatchObject({ state: 'valid', canResend: true });
    expect((await runOf(app, ws, runId)).status).toBe('review_required');
  });
});
