import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
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
      await click(page, 'button', 'Close');
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
});
