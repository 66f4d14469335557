import { createHmac } from 'node:crypto';
import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { addMember } from '../../support/teams';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Webhooks in the dashboard (docs/web.md "Webhooks"): a subscription made in the app to a local
 * receiver, its secret copied once, a generated document's delivery in the log with its attempt, a
 * delivery the receiver refused until it ran out of attempts sent again, a test event, editing and
 * deleting; every request the receiver got is signed with the copied secret. A viewer sees none of it.
 */
describe('webhooks in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let p: DocumentProject;
  beforeAll(async () => {
    // The receiver is on 127.0.0.1, which outbound requests refuse unless the operator allows it; short retry waits.
    ({ app, browser } = await startAppWithBrowser({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } }));
    receiver = await startWebhookReceiver();
    p = await setupDocumentProject(app);
  });
  afterAll(async () => {
    await receiver?.stop();
    await closeAppWithBrowser(app, browser);
  });

  const generate = async () => {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'Ada' } } });
    expect(res.status).toBe(201);
    await waitForJob(app, p.apiKey, res.body.jobId);
    return res.body.jobId as string;
  };
  const signed = (req: ReceivedRequest, secret: string) =>
    req.headers['x-service-signature'] === `v1=${createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.${req.rawBody}`).digest('hex')}`;
  const dialogText = async (page: Page, name: string, text: string) => {
    const dialog = await byRole(page, 'dialog', name).waitHandle();
    await page.waitForFunction((el, t) => el.textContent?.includes(t), {}, dialog, text);
    return dialog;
  };

  it('creates a subscription, shows its secret once, logs deliveries with their attempts, re-sends, tests, edits and deletes', async () => {
    const hook = `${receiver.url}/formwork`;
    await withAppPage(browser, 'webhooks', async (tab) => {
      const { page } = tab;
      await page.browserContext().overridePermissions(app.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
      await signInThroughApp(page, app.url, p.user.email, p.user.password);
      await byRole(page, 'link', 'Documents').click();
      await byRole(page, 'link', 'Webhooks').click();
      await byRole(page, 'heading', 'Webhooks').wait();

      await byRole(page, 'button', 'New webhook').click();
      await byRole(page, 'textbox', 'URL').fill(hook);
      await byRole(page, 'textbox', 'Description').fill('ERP sync');
      expect(await page.$eval('aria/document.generated[role="checkbox"]', (box) => (box as HTMLInputElement).checked)).toBe(true);
      await byRole(page, 'checkbox', 'batch.completed').click();
      await byRole(page, 'button', 'Create').click();
      const shown = await byRole(page, 'textbox', 'Signing secret').waitHandle();
      const secret = await shown.evaluate((box) => (box as HTMLInputElement).value);
      expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
      await byRole(page, 'button', 'Copy').click();
      await byRole(page, 'button', 'Copied').wait();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toBe(secret);
      await expectWellBehaved(tab, app.url, 'the new secret');
      await keepScreenshot(page, 'webhook-secret');
      await byRole(page, 'button', 'Done').click();
      await byRole(page, 'table', 'Webhook subscriptions').wait();
      // Shown once: not on the page any more, and the API never answers it again.
      expect(await page.evaluate(() => document.body.innerHTML)).not.toContain(copied);
      const list = await app.request('GET', '/api/webhooks', { token: p.user.accessToken });
      expect(list.body.data).toEqual([expect.objectContaining({ url: hook, description: 'ERP sync', events: ['document.generated', 'document.failed', 'batch.completed'], isActive: true })]);
      expect(list.text).not.toContain(copied);
      const id = list.body.data[0].id as string;

      // A document generated through the API: its delivery in the log, delivered at the first attempt.
      await generate();
      await waitForRegionText(page, 'Deliveries', 'Delivered');
      await waitForRegionText(page, 'Deliveries', 'document.generated');
      await byRole(page, 'button', 'Details of document.generated').click();
      await dialogText(page, 'Delivery', 'Delivered');
      const attempts = await byRole(page, 'table', 'Attempts').waitHandle();
      expect(await attempts.evaluate((t) => Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).slice(2, 4).map((c) => c.textContent)))).toEqual([['200', 'none']]);
      expect(await page.$('aria/Re-send[role="button"]')).toBeNull();
      await expectWellBehaved(tab, app.url, 'a delivery');
      await page.keyboard.press('Escape');

      // The receiver fails every attempt of the next one (503, retried three times), then answers 204.
      receiver.respondWith([503, 503, 503, 503], 204);
      await generate();
      await waitForRegionText(page, 'Deliveries', 'Failed');
      await byRole(page, 'button', 'Details of document.generated').click();
      await dialogText(page, 'Delivery', 'Failed');
      await dialogText(page, 'Delivery', 'HTTP 503');
      await byRole(page, 'button', 'Re-send').click();
      const dialog = await dialogText(page, 'Delivery', 'Delivered');
      await page.waitForFunction((el) => el.querySelectorAll('tbody tr').length === 5, {}, await byRole(page, 'table', 'Attempts').waitHandle());
      expect(await dialog.evaluate((d) => Array.from(d.querySelectorAll('tbody tr')).map((r) => r.querySelectorAll('td')[2]?.textContent))).toEqual(['503', '503', '503', '503', '204']);
      await keepScreenshot(page, 'webhook-delivery');
      await page.keyboard.press('Escape');
      const log = await app.request('GET', `/api/webhooks/${id}/deliveries`, { token: p.user.accessToken });
      expect(log.body.data.map((d: any) => [d.status, d.attempts.map((a: any) => a.statusCode)])).toEqual([
        ['completed', [503, 503, 503, 503, 204]],
        ['completed', [200]],
      ]);

      await byRole(page, 'button', `Send a test to ${hook}`).click();
      await waitForRegionText(page, 'Deliveries', 'webhook.test');
      await waitFor(() => receiver.requests.find((r) => r.json?.type === 'webhook.test'), { what: 'the test event' });
      await expectWellBehaved(tab, app.url, 'the delivery log');
      await keepScreenshot(page, 'webhooks');

      // Every request the receiver got is signed with the secret copied from the page.
      expect(receiver.requests.length).toBe(1 + 5 + 1);
      expect(receiver.requests.map((r) => signed(r, copied))).toEqual(receiver.requests.map(() => true));

      await byRole(page, 'button', `Edit ${hook}`).click();
      await byRole(page, 'dialog', 'Edit webhook').wait();
      await byRole(page, 'checkbox', 'document.failed').click();
      // The switch's input is drawn as its track: a person clicks the label around it.
      const active = await byRole(page, 'switch', 'Active').setVisibility(null).waitHandle();
      await (await active.evaluateHandle((input) => (input as HTMLInputElement).labels![0])).click();
      await byRole(page, 'button', 'Save').click();
      await waitFor(async () => (await app.request('GET', `/api/webhooks/${id}`, { token: p.user.accessToken })).body.isActive === false, { what: 'the webhook paused' });
      expect((await app.request('GET', `/api/webhooks/${id}`, { token: p.user.accessToken })).body).toMatchObject({ events: ['document.generated', 'batch.completed'], isActive: false });
      await page.waitForFunction(() => document.body.textContent?.includes('paused'));

      await byRole(page, 'button', `Delete ${hook}`).click();
      await byRole(page, 'dialog', 'Delete the webhook?').wait();
      await byRole(page, 'button', 'Delete').click();
      await page.waitForFunction(() => document.body.textContent?.includes('No webhooks yet.'));
      expect((await app.request('GET', `/api/webhooks/${id}`, { token: p.user.accessToken })).status).toBe(404);
    });
  });

  it('shows a viewer no webhook controls, and the API refuses them', async () => {
    const viewer = await addMember(app, p.user, p.projectId, 'viewer');
    const teams = await app.request('GET', '/api/teams', { token: p.user.accessToken });
    const project = (teams.body.data as Array<{ id: string; name: string }>).find((t) => t.id === p.projectId)!;
    await withAppPage(browser, 'webhooks-viewer', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, viewer.email, viewer.password);
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'combobox', 'Project').click();
      await (await page.waitForSelector(`aria/${project.name}[role="option"]`))!.click();
      await byRole(page, 'link', 'Documents').click();
      await byRole(page, 'link', 'Webhooks').click();
      await page.waitForFunction(() => document.body.textContent?.includes("Only the project's admins and owner manage its webhooks."));
      const buttons = await page.$$eval('button', (all) => all.map((b) => b.textContent?.trim()));
      expect(buttons.filter((b) => ['New webhook', 'Send a test', 'Edit', 'Delete', 'Re-send', 'Deliveries'].includes(b ?? ''))).toEqual([]);
      expect(await page.$('aria/Webhook subscriptions[role="table"]')).toBeNull();
      await expectWellBehaved(tab, app.url, 'webhooks as a viewer');
    });
    const refused = await app.request('POST', '/api/webhooks', { token: viewer.accessToken, headers: { 'X-Team-Id': p.projectId }, body: { url: `${receiver.url}/x`, events: ['document.generated'] } });
    expect(refused.status).toBe(403);
    expect((await app.request('GET', '/api/webhooks', { token: viewer.accessToken, headers: { 'X-Team-Id': p.projectId } })).status).toBe(403);
  });
});
