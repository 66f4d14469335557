import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, closeDialog, expectWellBehaved, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitForJob } from '../../support/documents';
import { waitFor } from '../../support/wait';

/**
 * The templates list's actions and a template's versions in the browser (docs/web.md): duplicate,
 * export and import a file, delete several at once; view a published version and restore it.
 */
describe('templates in the dashboard: copies, files, bulk delete, versions', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(() => closeAppWithBrowser(app, browser));

  async function createTemplate(user: SignedUpUser, name: string, text: string): Promise<string> {
    const res = await app.request('POST', '/api/templates', {
      token: user.accessToken,
      body: { name, outputFormats: ['pdf'], schema: { sections: [{ id: 'main', components: [{ id: 'greeting', type: 'heading', props: { text } }] }] } },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function names(user: SignedUpUser): Promise<string[]> {
    const res = await app.request('GET', '/api/templates?limit=100', { token: user.accessToken });
    return (res.body.data as { name: string }[]).map((t) => t.name).sort();
  }

  const click = async (page: Page, role: string, name: string) => byRole(page, role, name).click();

  it('duplicates, exports and imports a template file, and deletes the selected ones', async () => {
    const user = await signUp(app, { verified: true });
    await createTemplate(user, 'Letter', 'Dear reader');
    await createTemplate(user, 'Receipt', 'Thank you');
    const downloads = await mkdtemp(join(tmpdir(), 'exports-'));
    await withAppPage(browser, 'templates-list', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'link', 'Letter').wait();
      await expectWellBehaved(tab, app.url, 'templates list');

      await click(page, 'button', 'Duplicate Letter');
      await byRole(page, 'link', 'Letter (copy)').wait();
      expect(await names(user)).toEqual(['Letter', 'Letter (copy)', 'Receipt']);

      // Export: the browser saves the file the API names.
      await click(page, 'button', 'Export Receipt');
      const file = await waitFor(async () => (await readdir(downloads)).find((f) => f.endsWith('.json')), { what: 'the exported file' });
      const exported = JSON.parse(await readFile(join(downloads, file), 'utf8'));
      expect(JSON.stringify(exported)).toContain('Thank you');

      // Import that file: a new template, renamed since the name is taken, opened at once.
      const [chooser] = await Promise.all([page.waitForFileChooser(), click(page, 'button', 'Import a file')]);
      await chooser.accept([join(downloads, file)]);
      await byRole(page, 'heading', 'Receipt (2)').wait();
      expect(await names(user)).toEqual(['Letter', 'Letter (copy)', 'Receipt', 'Receipt (2)']);

      // Select two and delete them, after a confirmation.
      await click(page, 'link', 'Templates');
      await byRole(page, 'checkbox', 'Select Letter (copy)').click();
      await byRole(page, 'checkbox', 'Select Receipt').click();
      await click(page, 'button', 'Delete selected (2)');
      await click(page, 'button', 'Delete');
      await page.waitForFunction(() => document.body.textContent?.includes('Deleted 2 templates'));
      expect((await names(user)).filter((n) => n === 'Letter (copy)' || n === 'Receipt')).toEqual([]);
      expect(await page.$('aria/Letter (copy)[role="link"]')).toBeNull();
      await expectWellBehaved(tab, app.url, 'after bulk delete');
    }, { downloadPath: downloads });
  });

  it('lists the versions, shows an old one and restores it as a new version', async () => {
    const user = await signUp(app, { verified: true });
    const id = await createTemplate(user, 'Notice', 'First wording');
    expect((await app.request('POST', `/api/templates/${id}/publish`, { token: user.accessToken, body: { releaseNotes: 'The first' } })).status).toBe(201);
    const edited = await app.request('PUT', `/api/templates/${id}`, {
      token: user.accessToken,
      body: { schema: { sections: [{ id: 'main', components: [{ id: 'greeting', type: 'heading', props: { text: 'Second wording' } }] }] } },
    });
    expect(edited.status).toBe(200);
    expect((await app.request('POST', `/api/templates/${id}/publish`, { token: user.accessToken, body: { releaseNotes: 'The second' } })).status).toBe(201);

    await withAppPage(browser, 'template-versions', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await click(page, 'link', 'Notice');
      await waitForRegionText(page, 'Versions', 'The second');
      await click(page, 'button', 'View version 1');
      const definition = await byRole(page, 'textbox', 'Definition of this version').waitHandle();
      expect(await definition.evaluate((el) => (el as HTMLTextAreaElement).value)).toContain('First wording');
      await closeDialog(page);
      await click(page, 'button', 'Restore version 1');
      await click(page, 'button', 'Restore and publish');
      await waitForRegionText(page, 'Versions', 'Version 1 restored and published as version 3');
      await waitForRegionText(page, 'Versions', 'Restored from version 1');
      await expectWellBehaved(tab, app.url, 'versions');
    });
    const template = await app.request('GET', `/api/templates/${id}`, { token: user.accessToken });
    expect(template.body.latestVersion).toBe(3);
    expect(JSON.stringify(template.body.schema)).toContain('First wording');
  });

  it("shows an excel template's preview as the workbook's grid, beside the PDF", async () => {
    const user = await signUp(app, { verified: true });
    const res = await app.request('POST', '/api/templates', {
      token: user.accessToken,
      body: {
        name: 'Price list',
        outputFormats: ['pdf', 'excel'],
        variables: [{ name: 'items', type: 'array', required: true, items: { type: 'object', properties: { name: { type: 'string' }, price: { type: 'number' } } } }],
        schema: {
          sections: [
            {
              id: 'main',
              title: 'Prices',
              components: [
                { id: 'title', type: 'heading', props: { text: 'Prices of the season' } },
                { id: 'prices', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Article', field: 'name' }, { header: 'Price', field: 'price', format: 'currency' }] } },
              ],
            },
          ],
        },
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    expect((await app.request('PUT', `/api/templates/${id}/sample-data`, { token: user.accessToken, body: { data: { items: [{ name: 'Lantern', price: 1234.5 }] } } })).status).toBe(200);
    await withAppPage(browser, 'workbook-preview', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await click(page, 'link', 'Price list');
      await waitForRegionText(page, 'Preview', 'Prices of the season');
      // The segmented control's radios are visually hidden behind their labels: choose it as a keyboard would.
      await (await byRole(page, 'radio', 'Workbook').waitHandle()).evaluate((radio) => (radio as HTMLInputElement).click());
      const sheet = await page.locator('aria/Sheet Prices[role="table"]').waitHandle();
      const cells = await sheet.evaluate((table) => Array.from(table.querySelectorAll('td'), (td) => td.textContent));
      expect(cells).toEqual(expect.arrayContaining(['Prices of the season', 'Article', 'Price', 'Lantern']));
      // The price as its number format shows it, not the stored 1234.5.
      expect(cells.find((text) => text?.includes('1,234.50'))).toBeDefined();
      await expectWellBehaved(tab, app.url, 'workbook preview');
    });
  });

  it('files templates into folders and filters by folder; a template shows its analytics and automation fields', async () => {
    const user = await signUp(app, { verified: true });
    const letter = await createTemplate(user, 'Letter', 'Dear reader');
    await createTemplate(user, 'Receipt', 'Thank you');
    await createTemplate(user, 'Memo', 'To all');
    expect((await app.request('POST', `/api/templates/${letter}/publish`, { token: user.accessToken, body: {} })).status).toBe(201);
    const generated = await app.request('POST', '/api/documents/generate', { token: user.accessToken, body: { templateId: letter, format: 'pdf', variables: {} } });
    expect(generated.status).toBe(201);
    expect((await waitForJob(app, user.accessToken, generated.body.jobId)).status).toBe('completed');
    await withAppPage(browser, 'template-folders', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'checkbox', 'Select Letter').click();
      await byRole(page, 'checkbox', 'Select Receipt').click();
      await click(page, 'button', 'Move to a folder');
      await byRole(page, 'combobox', 'Folder name').fill('Customers');
      await click(page, 'button', 'Move');
      await page.waitForFunction(() => document.body.textContent?.includes('2 templates moved to Customers'));
      // Filter by the folder: the two filed templates, not the memo.
      await byRole(page, 'combobox', 'Folder').click();
      await click(page, 'option', 'Customers (2)');
      await page.waitForFunction(() => !document.querySelector('table[aria-label="Templates"]')?.textContent?.includes('Memo'));
      const listed = await page.$$eval('table[aria-label="Templates"] tbody tr a', (links) => links.map((a) => a.textContent).sort());
      expect(listed).toEqual(['Letter', 'Receipt']);
      await expectWellBehaved(tab, app.url, 'folders');

      await click(page, 'link', 'Letter');
      await waitForRegionText(page, 'Analytics', 'Documents in the period');
      expect(await regionFigure(page, 'Documents in the period')).toBe('1');
      expect(await regionFigure(page, 'Success rate')).toBe('100%');
      await waitForRegionText(page, 'Automation fields', 'The template declares no variables');
      await expectWellBehaved(tab, app.url, 'template insights');
    });
    const folders = await app.request('GET', '/api/templates/folders', { token: user.accessToken });
    expect(folders.body.data).toEqual([{ name: 'Customers', templates: 2 }]);
  });
});

/** The figure shown under a label of the Analytics region. */
async function regionFigure(page: Page, label: string): Promise<string | undefined> {
  const group = await page.locator(`aria/${label}[role="group"]`).waitHandle();
  return group.evaluate((el) => el.querySelector('p:last-child')?.textContent ?? undefined);
}
