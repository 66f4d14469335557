import type { Browser, Page } from 'puppeteer';
import { addCredits } from '../../../db/documents/billing';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { GROWING_LINES_TEMPLATE, linesOf, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { createTemplate, publish } from '../../support/templates';

/**
 * The Usage page (docs/web.md "Usage"): documents generated through the API from two templates, one
 * failing and one paid with a credit; the page shows the free quota used and the credits left, the
 * documents per day, the success rate and the figures per template by name, each read from the page
 * (the charts' figures as a screen reader reads them) and checked against the API's own numbers.
 */
describe('usage in the dashboard', () => {
  const LIMIT = 64 * 1024;
  let app: TestApp;
  let browser: Browser;
  let p: DocumentProject;
  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser({ env: { RENDER_HTML_MAX_BYTES: String(LIMIT), FREE_DOCUMENTS_PER_MONTH: '20' } }));
    p = await setupDocumentProject(app, { ...GROWING_LINES_TEMPLATE, name: 'Invoices' });
  });
  afterAll(() => closeAppWithBrowser(app, browser));

  async function generate(templateId: string, rows: number, useCredit = false): Promise<string> {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId, format: 'pdf', variables: linesOf(rows), useCredit } });
    expect(res.status).toBe(201);
    return (await waitForJob(app, p.apiKey, res.body.jobId)).status;
  }

  /** The cells of a table's body rows, by the table's name (a hidden one too: it is in the accessibility tree). */
  const rows = (page: Page, table: string) =>
    page.$eval(`aria/${table}[role="table"]`, (t) => Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent?.trim())));

  it('shows the free quota, the credits, documents per day, the success rate and each template against the API', async () => {
    const receipts = await createTemplate(app, p.user.accessToken, { ...GROWING_LINES_TEMPLATE, name: 'Receipts' });
    await publish(app, p.user.accessToken, receipts.id);
    await addCredits(app.services.db, p.projectId, 3, 'test pack');
    expect(await generate(p.templateId, 3)).toBe('completed');
    expect(await generate(p.templateId, 5)).toBe('completed');
    expect(await generate(p.templateId, 100)).toBe('failed');
    expect(await generate(receipts.id, 3)).toBe('completed');
    expect(await generate(receipts.id, 3, true)).toBe('completed');

    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const quota = (await app.request('GET', '/api/documents/quota', { token: p.user.accessToken })).body;
    const analytics = (await app.request('GET', `/api/documents/analytics?startDate=${monthStart}`, { token: p.user.accessToken })).body;
    // Four free documents asked for, the failed one given back; one credit spent.
    expect(quota).toMatchObject({ freeDocuments: { limit: 20, used: 3, remaining: 17 }, credits: { balance: 2 } });
    expect(analytics).toMatchObject({ totalDocuments: 5, completedDocuments: 4, failedDocuments: 1, successRate: 80 });

    await withAppPage(browser, 'usage', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, p.user.email, p.user.password);
      await byRole(page, 'link', 'Usage').click();
      await waitForRegionText(page, 'Free documents this month', `${quota.freeDocuments.used} of ${quota.freeDocuments.limit} used`);
      await waitForRegionText(page, 'Free documents this month', `${quota.freeDocuments.remaining} left`);
      const bar = await byRole(page, 'progressbar', 'Free documents used this month').waitHandle();
      expect(await bar.evaluate((el) => [el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemax')])).toEqual(['3', '20']);
      await waitForRegionText(page, 'Credits', String(quota.credits.balance));

      await waitForRegionText(page, 'Success rate', '80%');
      for (const [figure, value] of [['Documents', analytics.totalDocuments], ['Completed', analytics.completedDocuments], ['Failed', analytics.failedDocuments]]) {
        expect([figure, await page.$eval(`aria/${figure}[role="region"]`, (r) => r.textContent)]).toEqual([figure, `${figure}${value}`]);
      }

      // The charts as a screen reader reads them: a picture with a summary, and its figures.
      const perDay = analytics.byDate.map((d: any) => [d.date, String(d.count), String(d.completed), String(d.failed)]);
      expect(perDay.map((d: string[]) => d[1])).toEqual(['5']);
      expect(await rows(page, 'Documents per day (figures)')).toEqual(perDay);
      const summary = await page.$eval('aria/Documents per day[role="region"]', (r) => r.querySelector('[role="img"]')?.getAttribute('aria-label'));
      expect(summary).toMatch(/^Bar chart of documents per day: 5 over \d+ days, most on .+ \(5\)\.$/);
      // The chart is drawn (its picture is kept below and looked at).
      expect(await page.$eval('aria/Documents per day[role="region"]', (r) => Math.max(...Array.from(r.querySelectorAll('[role="img"] svg')).map((svg) => svg.getBoundingClientRect().height)))).toBeGreaterThan(100);
      expect(await rows(page, 'Success rate per day (figures)')).toEqual([[analytics.byDate[0].date, '80%']]);

      const perTemplate = analytics.byTemplate.map((t: any) => [t.templateName, String(t.total), String(t.completed), String(t.failed), `${Number.isInteger(t.successRate) ? t.successRate : t.successRate.toFixed(1)}%`]);
      expect(perTemplate).toEqual([
        ['Invoices', '3', '2', '1', '66.7%'],
        ['Receipts', '2', '2', '0', '100%'],
      ]);
      expect(await rows(page, 'Documents per template')).toEqual(perTemplate);
      await expectWellBehaved(tab, app.url, 'usage');
      await keepScreenshot(page, 'usage');

      // Another period: the same documents, all of them today.
      // The period's radio input is drawn as its label: a person clicks that.
      const week = await byRole(page, 'radio', 'Last 7 days').setVisibility(null).waitHandle();
      await (await week.evaluateHandle((input) => (input as HTMLInputElement).labels![0])).click();
      await page.waitForFunction(() => document.querySelector('[aria-label^="Bar chart of documents per day: 5 over 7 days"]'));
      expect(await rows(page, 'Documents per template')).toEqual(perTemplate);
      await expectWellBehaved(tab, app.url, 'usage, last 7 days');
      await keepScreenshot(page, 'usage-7-days');

      // On a phone the page is one column: the quota box stays within the screen.
      await page.setViewport({ width: 375, height: 800 });
      await page.waitForFunction(() => document.documentElement.scrollWidth <= 375);
      const box = await byRole(page, 'region', 'Free documents this month').waitHandle();
      expect(await box.evaluate((el) => el.getBoundingClientRect().right)).toBeLessThanOrEqual(375);
      await keepScreenshot(page, 'usage-phone');
    });
  });
});
