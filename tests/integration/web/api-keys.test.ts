import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, closeDialog, expectWellBehaved, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { tokenByForm } from '../../support/oauth';
import { waitFor } from '../../support/wait';

/**
 * The API keys page (docs/web.md "API keys and OAuth clients"): a key made with chosen permissions and
 * an expiry, shown once with "Copy"; what it may do against the API; its usage; edited, revoked,
 * reactivated and deleted. Then an OAuth client whose secret, shown once, obtains tokens, edited,
 * rotated, switched off and on, and deleted. Each step is checked against the API.
 */
describe('API keys and OAuth clients in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(() => closeAppWithBrowser(app, browser));

  async function openApiKeys(page: Page, user: SignedUpUser): Promise<void> {
    // "Copy" writes to the clipboard; the test reads it back.
    await page.browserContext().overridePermissions(app.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    await signInThroughApp(page, app.url, user.email, user.password);
    await byRole(page, 'heading', 'Templates').wait();
    await byRole(page, 'link', 'API keys').click();
    await byRole(page, 'heading', 'API keys').wait();
  }
  const valueOf = (page: Page, name: string) => page.$eval(`aria/${name}[role="textbox"]`, (input) => (input as HTMLInputElement).value);
  const pageHas = (page: Page, text: string) => page.evaluate((t) => document.body.textContent?.includes(t) ?? false, text);
  const call = (token: string, method = 'GET', path = '/api/templates', body?: unknown) => app.request(method, path, { token, body });

  it('creates a key with restricted permissions, shown once with Copy; it works only for them; usage, edit, revoke, reactivate, delete', async () => {
    const owner = await signUp(app, { verified: true });
    await withAppPage(browser, 'api-keys', async (tab) => {
      const { page } = tab;
      await openApiKeys(page, owner);
      await byRole(page, 'button', 'Create API key').click();
      await byRole(page, 'textbox', 'Name').fill('CI reader');
      // The everyday three are ticked; keep reading templates only.
      await byRole(page, 'checkbox', 'Generate documents').click();
      await byRole(page, 'checkbox', 'Read documents').click();
      await byRole(page, 'button', 'Create').click();
      await byRole(page, 'button', 'Copy').click();
      await byRole(page, 'button', 'Copied').wait();
      const key = await valueOf(page, 'New API key');
      expect(key).toMatch(/^fm_live_/);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      await expectWellBehaved(tab, app.url, 'API key shown');
      await keepScreenshot(page, 'api-key-created');

      // Only what it was given: templates, not documents.
      expect((await call(key)).status).toBe(200);
      expect((await call(key, 'GET', '/api/documents/jobs')).status).toBe(403);
      expect((await call(key, 'POST', '/api/documents/generate', { templateId: 'none', variables: {} })).status).toBe(403);
      const [listed] = (await call(owner.accessToken, 'GET', '/api/api-keys')).body.data;
      expect(listed).toMatchObject({ name: 'CI reader', permissions: { read_templates: true, read_documents: false, generate_documents: false, manage_webhooks: false }, expiresAt: null });

      // The key is not on the page once the dialog closes; its row says what it may do.
      await byRole(page, 'button', 'Done').click();
      await waitForRegionText(page, 'API keys', 'Read templates');
      expect(await pageHas(page, key)).toBe(false);
      expect(await regionText(page, 'API keys')).toContain('active');
      await keepScreenshot(page, 'api-keys-list');

      // Its usage: the three calls, once the API has written them (every few seconds).
      await waitFor(async () => (await call(owner.accessToken, 'GET', `/api/api-keys/${listed.id}/stats`)).body.totalRequests === 3, { what: 'the usage written' });
      await byRole(page, 'button', 'Details of CI reader').click();
      const total = await byRole(page, 'group', 'Requests in total').waitHandle();
      await page.waitForFunction((el) => el.textContent === 'Requests in total3', {}, total);
      expect(await page.$eval('aria/Requests today (UTC)[role="group"]', (el) => el.textContent)).toBe('Requests today (UTC)3');
      await expectWellBehaved(tab, app.url, 'API key details');
      await keepScreenshot(page, 'api-key-details');

      // Edit its permissions: reading documents works from its next call.
      await byRole(page, 'checkbox', 'Read documents').click();
      await byRole(page, 'button', 'Save changes').click();
      await waitForText(page, 'Saved: the key is allowed this from its next call');
      expect((await call(key, 'GET', '/api/documents/jobs')).status).toBe(200);
      await closeDialog(page);
      await waitForRegionText(page, 'API keys', 'Read documents');

      await byRole(page, 'button', 'Revoke CI reader').click();
      await byRole(page, 'button', 'Reactivate CI reader').wait();
      expect(await regionText(page, 'API keys')).toContain('revoked');
      expect((await call(key)).body).toMatchObject({ statusCode: 401, code: 'ERR_AKEY_003' });

      await byRole(page, 'button', 'Reactivate CI reader').click();
      await byRole(page, 'button', 'Revoke CI reader').wait();
      expect((await call(key)).status).toBe(200);

      await byRole(page, 'button', 'Delete CI reader').click();
      await byRole(page, 'button', 'Delete key').click();
      await waitForText(page, 'No API keys yet.');
      expect((await call(owner.accessToken, 'GET', `/api/api-keys/${listed.id}`)).status).toBe(404);
      expect((await call(key)).status).toBe(401);
    });
  });

  it('creates a key that expires at the end of the chosen day', async () => {
    const owner = await signUp(app, { verified: true });
    await withAppPage(browser, 'api-key-expiry', async (tab) => {
      const { page } = tab;
      await openApiKeys(page, owner);
      await byRole(page, 'button', 'Create API key').click();
      await byRole(page, 'textbox', 'Name').fill('Until 2030');
      // A date field is typed as its parts (the browser's locale, here month/day/year).
      await page.locator('aria/Expires after (optional)').click();
      await page.keyboard.type('01312030');
      await byRole(page, 'button', 'Create').click();
      await byRole(page, 'button', 'Copy').wait();
      expect(await valueOf(page, 'New API key')).toMatch(/^fm_live_/);
    });
    const [key] = (await call(owner.accessToken, 'GET', '/api/api-keys')).body.data;
    // The browser and this process share the machine's time zone.
    expect(key.expiresAt).toBe(new Date('2030-01-31T23:59:59.999').toISOString());
  });

  it('creates an OAuth client whose secret, shown once, obtains a token; edits, rotates (the old secret fails), switches it off and on, deletes it', async () => {
    const owner = await signUp(app, { verified: true });
    await withAppPage(browser, 'oauth-clients', async (tab) => {
      const { page } = tab;
      await openApiKeys(page, owner);
      await byRole(page, 'button', 'Create OAuth client').click();
      await byRole(page, 'textbox', 'Name').fill('billing sync');
      await byRole(page, 'checkbox', 'Generate documents').click();
      await byRole(page, 'button', 'Create client').click();
      await byRole(page, 'button', 'Copy the client secret').click();
      const first = { clientId: await valueOf(page, 'Client ID'), clientSecret: await valueOf(page, 'Client secret') };
      expect(first.clientId).toMatch(/^fmoc_/);
      expect(first.clientSecret).toMatch(/^fmocs_/);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first.clientSecret);
      await expectWellBehaved(tab, app.url, 'OAuth client secret shown');
      await keepScreenshot(page, 'oauth-client-created');

      // The shown secret obtains a token (client credentials), which reads templates and documents and generates nothing.
      const granted = await tokenByForm(app, first);
      expect(granted.status).toBe(200);
      expect(granted.body.scope.split(' ').sort()).toEqual(['read_documents', 'read_templates']);
      const token = granted.body.access_token as string;
      expect((await call(token)).status).toBe(200);
      expect((await call(token, 'POST', '/api/documents/generate', { templateId: 'none', variables: {} })).status).toBe(403);

      await byRole(page, 'button', 'Done').click();
      await waitForRegionText(page, 'OAuth clients', first.clientId);
      expect(await pageHas(page, first.clientSecret)).toBe(false);

      // Narrowing its permissions narrows its live token at once.
      await byRole(page, 'button', 'Edit billing sync').click();
      await byRole(page, 'checkbox', 'Read templates').click();
      await byRole(page, 'button', 'Save changes').click();
      await page.waitForFunction(() => !document.querySelector('[role="dialog"]'));
      expect((await call(token)).status).toBe(403);
      const [client] = (await call(owner.accessToken, 'GET', '/api/oauth/clients')).body.data;
      expect(client).toMatchObject({ name: 'billing sync', permissions: { read_documents: true, read_templates: false, generate_documents: false } });

      // Rotating shows a new secret once; the old one and its tokens stop working.
      await byRole(page, 'button', 'Rotate the secret of billing sync').click();
      await byRole(page, 'button', 'Rotate secret').click();
      await byRole(page, 'button', 'Copy the client secret').wait();
      const rotated = { clientId: first.clientId, clientSecret: await valueOf(page, 'Client secret') };
      expect(rotated.clientSecret).not.toBe(first.clientSecret);
      expect((await tokenByForm(app, first)).status).toBe(401);
      expect((await call(token, 'GET', '/api/documents/jobs')).status).toBe(401);
      const fresh = await tokenByForm(app, rotated);
      expect(fresh.status).toBe(200);
      expect((await call(fresh.body.access_token, 'GET', '/api/documents/jobs')).status).toBe(200);
      await byRole(page, 'button', 'Done').click();

      await byRole(page, 'button', 'Deactivate billing sync').click();
      await byRole(page, 'button', 'Reactivate billing sync').wait();
      expect((await tokenByForm(app, rotated)).status).toBe(401);
      await byRole(page, 'button', 'Reactivate billing sync').click();
      await byRole(page, 'button', 'Deactivate billing sync').wait();
      expect((await tokenByForm(app, rotated)).status).toBe(200);
      await expectWellBehaved(tab, app.url, 'OAuth clients');
      await keepScreenshot(page, 'oauth-clients');

      await byRole(page, 'button', 'Delete billing sync').click();
      await byRole(page, 'button', 'Delete client').click();
      await waitForText(page, 'No OAuth clients yet.');
      expect((await call(owner.accessToken, 'GET', `/api/oauth/clients/${client.id}`)).status).toBe(404);
      expect((await tokenByForm(app, rotated)).status).toBe(401);
    });
  });
});
