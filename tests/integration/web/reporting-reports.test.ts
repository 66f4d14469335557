import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createScratchDatabase, nextMinutesMatching, type ScratchDatabase } from '../../support/reporting-web';
import { createTemplate, publish as publishTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Reporting's reports, channels, schedules, runs and imports in the dashboard (docs/web.md
 * "Reporting: reports, schedules, runs, channels and imports"): a datasource on a database of the
 * test Postgres and a published query made through the API; in the app a report on that query with
 * PDF and CSV outputs previewed, a webhook channel (its secrets never shown back) tested, a schedule
 * built with the cron builder whose "Next runs" are the times worked out here, run now to completion,
 * its CSV downloaded and read, its delivery recorded; and a Metabase file imported item by item.
 */
describe('reporting: reports, schedules, runs, channels and imports in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let db: ScratchDatabase;
  let user: SignedUpUser;
  let datasourceId: string;
  let templateName: string;
  let reportId: string;
  let channelId: string;
  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { token: user.accessToken, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    // The datasource and the webhook receiver are on 127.0.0.1, which outbound connections refuse unless allowed.
    ({ app, browser } = await startAppWithBrowser({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } }));
    receiver = await startWebhookReceiver();
    user = await signUp(app, { verified: true });
    db = await createScratchDatabase(app);
    await db.query('CREATE TABLE orders (id integer PRIMARY KEY, label text NOT NULL, amount numeric(10,2) NOT NULL)');
    await db.query(`INSERT INTO orders VALUES (1, 'Apple crate', 12.50), (2, 'Pear box', 3.25), (3, 'Plum tray', 7.00)`);
    const ds = await api('POST', '/api/reporting/datasources', { name: 'Shop DB', kind: 'postgres', config: db.config, secrets: db.secrets });
    expect([ds.status, ds.body.code ?? null]).toEqual([201, null]);
    datasourceId = ds.body.id;
    const query = await api('POST', '/api/reporting/queries', { name: 'Orders', datasourceId, text: 'SELECT label, amount FROM orders ORDER BY id' });
    expect([query.status, query.body.code ?? null]).toEqual([201, null]);
    expect((await api('POST', `/api/reporting/queries/${query.body.id}/publish`, {})).status).toBe(201);
    const template = await createTemplate(app, user.accessToken);
    await publishTemplate(app, user.accessToken, template.id);
    templateName = template.name;
  });

  afterAll(async () => {
    await receiver?.stop();
    await db?.drop();
    await closeAppWithBrowser(app, browser);
  });

  const openReporting = async (page: Page, tab: string) => {
    await signInThroughApp(page, app.url, user.email, user.password);
    await byRole(page, 'heading', 'Templates').wait();
    await byRole(page, 'link', 'Reporting').click();
    await byRole(page, 'link', tab).click();
    await byRole(page, 'heading', tab).wait();
  };
  const choose = async (page: Page, combobox: string, option: string) => {
    await byRole(page, 'combobox', combobox).click();
    await byRole(page, 'option', option).click();
  };
  const clickRadio = async (page: Page, name: string) => (await byRole(page, 'radio', name).waitHandle()).evaluate((r) => (r as HTMLElement).click());

  it('makes a report on a published query with PDF and CSV outputs, publishes it and previews both', async () => {
    await withAppPage(browser, 'reporting-report', async (tab) => {
      const { page } = tab;
      await openReporting(page, 'Reports');
      await page.waitForFunction(() => document.body.textContent?.includes('No reports yet.'));
      await expectWellBehaved(tab, app.url, 'the reports list');
      await byRole(page, 'link', 'New report').click();
      await byRole(page, 'heading', 'New report').wait();
      await byRole(page, 'textbox', 'Name').fill('Orders report');
      await choose(page, 'Template', templateName);
      await choose(page, 'Dataset 1 query', 'Orders');
      await byRole(page, 'textbox', 'Report parameters').fill('[{"name": "customer", "type": "string", "default": "ACME"}]');
      await byRole(page, 'checkbox', 'CSV').click();
      await byRole(page, 'button', 'Create report').click();
      await byRole(page, 'heading', 'Orders report').wait();

      const list = await api('GET', '/api/reporting/reports');
      expect(list.body.data).toEqual([
        expect.objectContaining({ name: 'Orders report', templateId: expect.any(String), outputs: [{ format: 'pdf' }, { format: 'csv' }], datasets: [expect.objectContaining({ name: 'items', shape: 'rows' })] }),
      ]);
      reportId = list.body.data[0].id;
      expect(page.url()).toBe(`${app.url}/reporting/reports/${reportId}`);

      await byRole(page, 'button', 'Publish').click();
      await waitForRegionText(page, 'Publish', 'Published version 1.');
      expect((await api('GET', `/api/reporting/reports/${reportId}`)).body).toMatchObject({ isPublished: true, latestVersion: 1 });

      // The PDF preview: the template's table holds the query's rows, drawn by the app's pdf.js viewer.
      await byRole(page, 'button', 'Preview').click();
      for (const text of ['Dear ACME', 'Apple crate', 'Pear box', 'Plum tray']) await waitForRegionText(page, 'Preview', text);
      await expectWellBehaved(tab, app.url, 'the report with its PDF preview');
      await (await byRole(page, 'region', 'Preview').waitHandle()).scrollIntoView();
      await keepScreenshot(page, 'report-preview');
      await clickRadio(page, 'CSV');
      await byRole(page, 'button', 'Preview').click();
      const csv = await (await byRole(page, 'region', 'CSV preview').waitHandle()).evaluate((el) => el.textContent);
      expect(csv?.split(/\r?\n/).filter(Boolean)).toEqual(['label,amount', 'Apple crate,12.50', 'Pear box,3.25', 'Plum tray,7.00']);
    });
  });

  it('creates a webhook channel whose secrets are never shown back, and tests it', async () => {
    await withAppPage(browser, 'reporting-channel', async (tab) => {
      const { page } = tab;
      await openReporting(page, 'Channels');
      await byRole(page, 'button', 'New channel').click();
      await byRole(page, 'dialog', 'New channel').wait();
      await byRole(page, 'textbox', 'Channel name').fill('Orders hook');
      await byRole(page, 'textbox', 'URL').fill(`${receiver.url}/reports`);
      await byRole(page, 'textbox', 'Headers').fill('X-Tenant: hidden-tenant-value');
      await byRole(page, 'button', 'Create').click();
      const secret = await (await byRole(page, 'textbox', 'Signing secret').waitHandle()).evaluate((box) => (box as HTMLInputElement).value);
      expect(secret).toMatch(/^whsec_/);
      await expectWellBehaved(tab, app.url, 'the new channel\'s signing secret');
      await byRole(page, 'button', 'Done').click();
      await byRole(page, 'table', 'Channels').wait();
      // Shown once: neither the signing secret nor the header value is on the page or in the API's answers.
      expect(await page.evaluate(() => document.body.innerHTML)).not.toContain(secret);
      const listed = await api('GET', '/api/reporting/channels');
      expect(listed.body.data).toEqual([expect.objectContaining({ name: 'Orders hook', kind: 'webhook', config: expect.objectContaining({ url: `${receiver.url}/reports`, headers: { 'X-Tenant': { set: true } } }) })]);
      expect(listed.text).not.toContain(secret);
      expect(listed.text).not.toContain('hidden-tenant-value');
      channelId = listed.body.data[0].id;

      await byRole(page, 'button', 'Test Orders hook').click();
      await waitForText(page, 'Succeeded in');
      const test = await waitFor(() => receiver.requests.find((r) => r.json?.type === 'report.test'), { what: 'the test event' });
      expect(test.headers['x-tenant']).toBe('hidden-tenant-value');
      expect((await api('GET', `/api/reporting/channels/${channelId}`)).body.lastTest).toMatchObject({ ok: true });
      await page.waitForFunction(() => document.body.textContent?.includes('passed'));

      // Editing shows the header's name, never its value.
      await byRole(page, 'button', 'Edit Orders hook').click();
      const headers = await (await byRole(page, 'textbox', 'Headers').waitHandle()).evaluate((box) => (box as HTMLTextAreaElement).value);
      expect(headers).toBe('X-Tenant:');
      expect(await page.evaluate(() => document.body.innerHTML)).not.toContain('hidden-tenant-value');
      await expectWellBehaved(tab, app.url, 'editing a channel');
      await byRole(page, 'button', 'Cancel').click();
      await page.waitForFunction(() => !document.querySelector('[role="dialog"]'));
      await keepScreenshot(page, 'report-channels');
    });
  });

  it('builds a schedule with the cron builder, shows its next runs in its zone, runs it now and downloads its CSV', async () => {
    await withAppPage(browser, 'reporting-schedule', async (tab) => {
      const { page } = tab;
      await openReporting(page, 'Schedules');
      await byRole(page, 'link', 'New schedule').click();
      await byRole(page, 'heading', 'New schedule').wait();
      await byRole(page, 'textbox', 'Schedule name').fill('Weekday mornings');
      await choose(page, 'Report', 'Orders report');

      // The expression typed by hand sets the builder; the builder writes the expression.
      await byRole(page, 'textbox', 'Cron expression').fill('0 6 * * 3');
      await page.waitForFunction((radio) => (radio as HTMLInputElement).checked, {}, await byRole(page, 'radio', 'Weekly').setVisibility(null).waitHandle());
      expect(await page.$eval('aria/On (day of the week)[role="combobox"]', (box) => (box as HTMLInputElement).value)).toBe('Wednesday');
      await clickRadio(page, 'Weekdays');
      await byRole(page, 'textbox', 'At (time)').fill('07:30');
      // Each keystroke rewrites the expression ("0", "07", … "07:30"): the last one's is the one that counts.
      const expression = await byRole(page, 'textbox', 'Cron expression').waitHandle();
      await page.waitForFunction((box) => (box as HTMLInputElement).value === '30 7 * * 1-5', {}, expression);

      const before = new Date();
      // The zone's box holds the browser's zone: a person selects it and types over it.
      await (await byRole(page, 'combobox', 'Time zone').waitHandle()).click({ count: 3 });
      await page.keyboard.type('Europe/Berlin');
      await byRole(page, 'option', 'Europe/Berlin').click();
      await waitForText(page, 'Next runs (Europe/Berlin)');
      const nextRuns = await byRole(page, 'list', 'Next runs').waitHandle();
      await page.waitForFunction((list) => list.querySelectorAll('time').length === 5, {}, nextRuns);
      const shown = await nextRuns.evaluate((list) => Array.from(list.querySelectorAll('time')).map((t) => ({ at: t.getAttribute('datetime')!, text: t.textContent! })));
      // Worked out here minute by minute; a fire time may pass between `before` and the page's check.
      const expected = nextMinutesMatching('30 7 * * 1-5', 'Europe/Berlin', before, 6);
      expect([expected.slice(0, 5), expected.slice(1, 6)]).toContainEqual(shown.map((s) => s.at));
      for (const s of shown) expect(s.text).toMatch(/^(Mon|Tue|Wed|Thu|Fri), .* 07:30$/);
      await choose(page, 'Channels', 'Orders hook (webhook)');
      await page.keyboard.press('Escape');
      await expectWellBehaved(tab, app.url, 'the schedule form');
      await keepScreenshot(page, 'report-schedule-form');

      await byRole(page, 'button', 'Create schedule').click();
      await byRole(page, 'heading', 'Weekday mornings').wait();
      const schedules = (await api('GET', '/api/reporting/schedules')).body.data;
      expect(schedules).toEqual([expect.objectContaining({ name: 'Weekday mornings', cron: '30 7 * * 1-5', timezone: 'Europe/Berlin', status: 'active', channelIds: [channelId], target: { type: 'report', id: reportId } })]);
      // What the form showed is what Temporal will do.
      const saved = (await api('GET', `/api/reporting/schedules/${schedules[0].id}`)).body;
      expect(saved.nextRunTimes).toEqual(nextMinutesMatching('30 7 * * 1-5', 'Europe/Berlin', new Date(), 5));

      await byRole(page, 'button', 'Run now').click();
      await byRole(page, 'link', 'Open the run').click();
      await waitForRegionText(page, 'Run', 'completed');
      const runs = (await api('GET', `/api/reporting/runs?scheduleId=${schedules[0].id}`)).body.data;
      expect(runs).toEqual([expect.objectContaining({ status: 'completed', trigger: 'schedule', timezone: 'Europe/Berlin' })]);
      expect([...runs[0].formats].sort()).toEqual(['csv', 'pdf']);
      expect(page.url()).toBe(`${app.url}/reporting/runs/${runs[0].id}`);

      // The delivery record: the webhook channel got the run's event at the first attempt.
      await waitForRegionText(page, 'Deliveries', 'Orders hook (webhook)');
      const records = await (await byRole(page, 'table', 'Delivery records').waitHandle()).evaluate((t) =>
        Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).slice(0, 5).map((c) => c.textContent)),
      );
      expect(records).toEqual([['Orders hook (webhook)', expect.stringContaining('127.0.0.1'), 'completed', expect.stringMatching(/^1#1 200 in \d+ ms$/), 'none']]);
      const event = receiver.requests.find((r) => r.json?.type === 'report.run.completed');
      expect(event?.json.data.run.id).toBe(runs[0].id);

      // The files: links of this origin; the CSV read back is the table's rows.
      const pdfName = runs[0].outputs.find((o: { format: string }) => o.format === 'pdf').filename as string;
      const csvName = runs[0].outputs.find((o: { format: string }) => o.format === 'csv').filename as string;
      await byRole(page, 'link', `Download ${pdfName}`).wait();
      const href = await (await byRole(page, 'link', `Download ${csvName}`).waitHandle()).evaluate((a) => (a as HTMLAnchorElement).href);
      expect(new URL(href).origin).toBe(new URL(app.url).origin);
      const file = await fetch(href);
      expect(file.status).toBe(200);
      const rows = await db.query<{ label: string; amount: string }>('SELECT label, amount FROM orders ORDER BY id');
      expect(await file.text()).toBe(['label,amount', ...rows.map((r) => `${r.label},${r.amount}`)].map((line) => `${line}\r\n`).join(''));
      await expectWellBehaved(tab, app.url, 'a completed run');
      await (await byRole(page, 'region', 'Deliveries').waitHandle()).scrollIntoView();
      await keepScreenshot(page, 'report-run');

      // Back at the top: the page's sticky header would cover the area's navigation.
      await page.evaluate(() => window.scrollTo(0, 0));
      await byRole(page, 'link', 'Runs').click();
      await byRole(page, 'link', `Run ${runs[0].shortId}`).wait();
      await expectWellBehaved(tab, app.url, 'the runs list');
      await byRole(page, 'link', 'Schedules').click();
      await byRole(page, 'table', 'Schedules').wait();
      await byRole(page, 'button', 'Pause Weekday mornings').click();
      await waitFor(async () => (await api('GET', `/api/reporting/schedules/${schedules[0].id}`)).body.status === 'paused', { what: 'the schedule paused' });
      await byRole(page, 'button', 'Resume Weekday mornings').wait();
      await expectWellBehaved(tab, app.url, 'the schedules list');

      // A job: the report in a bundle, made on the same page and run now; its run completes.
      await byRole(page, 'button', 'New job').click();
      await byRole(page, 'textbox', 'Job name').fill('Morning bundle');
      await choose(page, 'Reports of the job', 'Orders report');
      await byRole(page, 'button', 'Create job').click();
      await byRole(page, 'button', 'Run job Morning bundle').click();
      const jobs = (await api('GET', '/api/reporting/jobs')).body.data;
      expect(jobs).toEqual([expect.objectContaining({ name: 'Morning bundle', delivery: 'bundle', items: [expect.objectContaining({ reportId: expect.any(String) })] })]);
      await waitForRegionText(page, 'Jobs', 'Job run');
      const jobRun = await waitFor(
        async () => {
          const [r] = (await api('GET', `/api/reporting/job-runs?jobId=${jobs[0].id}`)).body.data;
          return r && ['completed', 'failed'].includes(r.status) ? r : undefined;
        },
        { what: 'the job run ended', timeoutMs: 60_000 },
      );
      expect(jobRun.status).toBe('completed');
      expect(await regionText(page, 'Jobs')).toContain(`Job run ${jobRun.shortId}`);
      await expectWellBehaved(tab, app.url, 'the jobs');
    });
  });

  it('imports a Metabase export and shows what each item became', async () => {
    const file = join(tmpdir(), `metabase-cards-${process.pid}.json`);
    await writeFile(
      file,
      JSON.stringify([
        {
          id: 1,
          name: 'Orders over a minimum',
          dataset_query: { type: 'native', database: 2, native: { query: 'SELECT label FROM orders WHERE amount >= {{min}}', 'template-tags': { min: { name: 'min', type: 'number', 'display-name': 'Minimum' } } } },
        },
        {
          id: 2,
          name: 'Filtered by a field filter',
          dataset_query: { type: 'native', database: 2, native: { query: 'SELECT * FROM orders WHERE {{created}}', 'template-tags': { created: { name: 'created', type: 'dimension', dimension: ['field', 11, null], 'widget-type': 'date/all-options' } } } },
        },
        { id: 3, name: 'GUI question', dataset_query: { type: 'query', database: 2, query: { 'source-table': 5, aggregation: [['count']] } } },
      ]),
    );
    await withAppPage(browser, 'reporting-import', async (tab) => {
      const { page } = tab;
      await openReporting(page, 'Imports');
      await page.waitForFunction(() => document.body.textContent?.includes('No imports yet.'));
      const [chooser] = await Promise.all([page.waitForFileChooser(), byRole(page, 'button', 'Export file').click()]);
      await chooser.accept([file]);
      await choose(page, 'Datasource', 'Shop DB (postgres)');
      await byRole(page, 'button', 'Import').click();
      const items = await byRole(page, 'table', 'Imported items').waitHandle();
      const rows = await items.evaluate((t) => Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).slice(0, 3).map((c) => c.textContent)));
      expect(rows).toEqual([
        [expect.stringContaining('Orders over a minimum'), 'imported', 'none'],
        [expect.stringContaining('Filtered by a field filter'), 'needs attention', expect.stringContaining('created')],
        [expect.stringContaining('GUI question'), 'failed: not supported', expect.stringMatching(/.+/)],
      ]);
      await waitForRegionText(page, 'Import outcome', 'Imported, with items to look at');
      const imports = (await api('GET', '/api/reporting/imports')).body.data;
      expect(imports).toEqual([expect.objectContaining({ format: 'metabase', status: 'completed_with_warnings', itemCount: 3, dryRun: false })]);
      const detail = (await api('GET', `/api/reporting/imports/${imports[0].id}`)).body;
      expect(detail.items.map((i: { action: string }) => i.action)).toEqual(['created', 'needs_attention', 'unsupported']);
      const made = await api('GET', `/api/reporting/queries/${detail.items[0].queryId}`);
      expect(made.body).toMatchObject({ name: 'Orders over a minimum', datasourceId, parameters: [expect.objectContaining({ name: 'min', type: 'number' })] });
      await waitForRegionText(page, 'Earlier imports', `metabase-cards-${process.pid}.json`);
      await expectWellBehaved(tab, app.url, 'an import\'s outcome');
      await keepScreenshot(page, 'report-import');
    });
  });
});
