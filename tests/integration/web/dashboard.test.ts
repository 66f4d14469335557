import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { type AppPage, byRole, closeAppWithBrowser, expectWellBehaved as expectWellBehaved_, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, typeOver, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { buildSignup, signUp } from '../../support/factories';
import { pdfText } from '../../support/rendering-pdf';
import { addMember } from '../../support/teams';
import { totp } from '../../support/totp';

/**
 * The dashboard end to end (docs/web.md): the app built into web/dist (`npm run build`), served by
 * the API at `/`, driven in Debian's Chromium as a person would, controls found by role and name.
 */
describe('the web dashboard in a browser', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(() => closeAppWithBrowser(app, browser));

  const expectWellBehaved = (tab: AppPage, where: string) => expectWellBehaved_(tab, app.url, where);
  const signIn = (page: Page, email: string, password: string) => signInThroughApp(page, app.url, email, password);

  it('serves the app at / with a strict CSP and every file from this origin; API clients keep JSON 404s', async () => {
    const page = await fetch(`${app.url}/templates`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toMatch(/style-src 'self' 'nonce-[A-Za-z0-9+/=]{24}'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    const html = await page.text();
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    expect(html).toContain(`content="${nonce}"`);
    // No inline script: every <script> names a file of the build.
    expect(html.match(/<script[^>]*>/g)?.every((tag) => /src="\/assets\/[^"]+\.js"/.test(tag))).toBe(true);
    // Each page has its own nonce.
    const again = await fetch(`${app.url}/`, { headers: { Accept: 'text/html' } });
    expect(again.headers.get('content-security-policy')).not.toBe(csp);

    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
    const bundle = await fetch(`${app.url}${script}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect(bundle.headers.get('cache-control')).toContain('immutable');

    const api = await fetch(`${app.url}/api/nothing-here`, { headers: { Accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'ERR_REQ_003' });
    const json = await fetch(`${app.url}/templates`);
    expect(json.status).toBe(404);
    const missing = await fetch(`${app.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
    // Nothing outside web/dist is served, however the path is spelled.
    for (const path of ['/assets/..%2f..%2fpackage.json', '/..%2fpackage.json', '/assets/%2e%2e/%2e%2e/package.json', '/%2e%2e%2fweb%2fpackage.json', '/assets/..\\..\\package.json']) {
      const res = await fetch(`${app.url}${path}`, { headers: { Accept: 'text/html' } });
      const body = await res.text();
      expect({ path, leaked: body.includes('"workspaces"') || body.includes('formwork-web') }).toEqual({ path, leaked: false });
      // A JSON 404 for what is no file of the build, or the app's page for what is no file name at all.
      expect({ path, answer: res.status === 404 ? JSON.parse(body).code : res.status === 200 && body.includes('<div id="root">') ? 'the app' : res.status }).toEqual({
        path,
        answer: expect.stringMatching(/^(ERR_REQ_003|the app)$/),
      });
    }
  });

  it('signs up, confirms the e-mail by its link, starts an invoice from the example, publishes, generates and downloads the PDF', async () => {
    const person = buildSignup();
    await withAppPage(browser, 'sign-up-to-download', async (tab) => {
      const { page } = tab;
      await page.goto(`${app.url}/`);
      await byRole(page, 'button', 'Sign in').wait();
      await expectWellBehaved(tab, 'sign-in');
      await keepScreenshot(page, 'sign-in');
      await byRole(page, 'link', 'Create an account').click();
      await byRole(page, 'textbox', 'Name').fill(person.name);
      await byRole(page, 'textbox', 'Email').fill(person.email);
      await page.locator('aria/Password').fill(person.password);
      await byRole(page, 'button', 'Create account').click();
      await byRole(page, 'heading', 'Templates').wait();
      const nav = await page.$('aria/Main[role="navigation"]');
      expect(nav).not.toBeNull();
      for (const link of ['Templates', 'Documents', 'Flow', 'Approvals', 'Reporting', 'API keys', 'Team', 'Usage', 'Settings']) {
        expect(await nav!.$(`aria/${link}[role="link"]`)).not.toBeNull();
      }
      await expectWellBehaved(tab, 'templates');

      // The e-mailed link opens the app's page (docs/web.md "Links in e-mails"); its button confirms.
      const mail = await app.smtp!.waitForMessage((m) => m.to.includes(person.email) && m.subject === 'Confirm your e-mail address');
      const link = /(https?:\/\/\S+\/verify-email\?token=[\w-]+)/.exec(mail.text)![1];
      await page.goto(link);
      await byRole(page, 'button', 'Confirm my e-mail address').click();
      await waitForText(page, 'E-mail address confirmed');

      // Back in the app after a full page load: the session comes back from its HttpOnly cookie.
      await page.goto(`${app.url}/templates`);
      await byRole(page, 'button', 'Start from an example').click();
      await byRole(page, 'button', 'Use the Invoice (example) example').wait();
      await keepScreenshot(page, 'examples');
      await byRole(page, 'button', 'Use the Invoice (example) example').click();
      await byRole(page, 'heading', 'Invoice (example)').wait();
      // The live preview: the real renderer's PDF of the draft with the example's sample data, its text in the page.
      await waitForRegionText(page, 'Preview', 'INV-2026-014');
      await keepScreenshot(page, 'template-preview');
      await typeOver(page, 'Sample data', 'INV-2026-014', 'INV-2026-777');
      await waitForRegionText(page, 'Preview', 'INV-2026-777');
      expect(await regionText(page, 'Preview')).not.toContain('INV-2026-014');

      // The code view: a definition the API refuses is not saved and its problems are listed; a sound one is, and the preview follows it.
      await typeOver(page, 'Definition (JSON)', '"type": "heading"', '"type": "headline"');
      await byRole(page, 'button', 'Save draft').click();
      await waitForRegionText(page, 'Definition', 'The draft was not saved');
      expect(await regionText(page, 'Definition')).toContain('ERR_TMPL_008');
      await typeOver(page, 'Definition (JSON)', '"type": "headline"', '"type": "heading"');
      await typeOver(page, 'Definition (JSON)', '"text": "Payment"', '"text": "How to pay"');
      await byRole(page, 'button', 'Save draft').click();
      await waitForRegionText(page, 'Preview', 'How to pay');
      expect(await regionText(page, 'Definition')).not.toContain('The draft was not saved');
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      expect(await page.evaluate(() => document.cookie)).toBe('');

      await byRole(page, 'button', 'Publish').click();
      await byRole(page, 'textbox', 'Release notes').fill('First version');
      await byRole(page, 'button', 'Publish version').click();
      await waitForText(page, 'published v1');
      await expectWellBehaved(tab, 'template');

      // The variables start as the example's sample data.
      await byRole(page, 'button', 'Generate').click();
      await byRole(page, 'heading', 'Documents').wait();
      const download = await byRole(page, 'link', 'Download').waitHandle();
      // The status shows as its word in the job's row.
      expect(await download.evaluate((a) => a.closest('tr')?.textContent)).toContain('completed');
      const href = await download.evaluate((a) => (a as HTMLAnchorElement).href);
      await expectWellBehaved(tab, 'documents');
      await keepScreenshot(page, 'documents');
      const pdf = await fetch(href);
      expect(pdf.status).toBe(200);
      const text = await pdfText(Buffer.from(await pdf.arrayBuffer()));
      // Generated from the published draft, with the sample data as edited.
      expect(text).toContain('INV-2026-777');
      expect(text).toContain('How to pay');
      expect(text).toContain('Ada Lovelace');
    });
  });

  it('asks for the authentication code when two-factor authentication is on', async () => {
    const user = await signUp(app, { verified: true });
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(setup.body.secret) } });
    await withAppPage(browser, 'two-factor', async (tab) => {
      const { page } = tab;
      await signIn(page, user.email, user.password);
      const code = byRole(page, 'textbox', 'Authentication code');
      await code.wait();
      await expectWellBehaved(tab, 'code asked');
      // The next time step's code: enabling claimed the current one, and a code is good once (drift of one step is allowed).
      await code.fill(totp(setup.body.secret, Date.now() + 30_000));
      await byRole(page, 'button', 'Sign in').click();
      await byRole(page, 'heading', 'Templates').wait();
    });
  });

  it('sets up two-factor authentication in Settings (QR code, key, backup codes, a code to confirm), stays signed in, and the next sign-in asks for a code; changes the password', async () => {
    const user = await signUp(app, { verified: true });
    await withAppPage(browser, 'settings', async (tab) => {
      const { page } = tab;
      await signIn(page, user.email, user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'link', 'Settings').click();
      await byRole(page, 'button', 'Set up two-factor authentication').click();
      // Chromium names the role of <img> "image"; the picture is found by its text alternative.
      await page.locator('aria/QR code for your authenticator app').wait();
      const key = await page.$eval('aria/Two-factor authentication[role="region"]', (region) => region.querySelector('code')?.textContent ?? '');
      expect(key).toMatch(/^[A-Z2-7]{16,}$/);
      expect(await page.$eval('aria/Backup codes[role="list"]', (list) => list.querySelectorAll('li').length)).toBeGreaterThanOrEqual(8);
      await expectWellBehaved(tab, 'two-factor set-up');
      await keepScreenshot(page, 'two-factor-setup');
      await byRole(page, 'textbox', 'Authentication code').fill(totp(key));
      await byRole(page, 'button', 'Turn on').click();
      await waitForRegionText(page, 'Two-factor authentication', 'On: signing in asks for a code');

      // Enabling ended the old session; the app holds the new one (cookie included): a reload keeps it.
      await page.reload();
      await byRole(page, 'heading', 'Settings').wait();

      // Password fields have no role; they are found by their label.
      await page.locator('aria/Current password').fill(user.password);
      await page.locator('aria/New password').fill('another long passphrase 4');
      await byRole(page, 'button', 'Change password').click();
      await waitForRegionText(page, 'Password', 'Password changed');
      await page.reload();
      await byRole(page, 'heading', 'Settings').wait();

      // Signed out once the app shows its sign-in page (a navigation before that would cut the sign-out short).
      await byRole(page, 'button', 'Sign out').click();
      await byRole(page, 'button', 'Sign in').wait();
      await byRole(page, 'textbox', 'Email').fill(user.email);
      await page.locator('aria/Password').fill('another long passphrase 4');
      await byRole(page, 'button', 'Sign in').click();
      const code = byRole(page, 'textbox', 'Authentication code');
      await code.wait();
      // The next step's code: the set-up claimed the current one (a code is good once; one step of drift is allowed).
      await code.fill(totp(key, Date.now() + 30_000));
      await byRole(page, 'button', 'Sign in').click();
      await byRole(page, 'heading', 'Templates').wait();
    });
    const old = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(old.status).toBe(401);
  });

  it('shows a viewer no edit controls, and the API refuses the edit anyway', async () => {
    const owner = await signUp(app, { verified: true });
    const teams = await app.request('GET', '/api/teams', { token: owner.accessToken });
    const teamId = teams.body.data[0].id as string;
    const created = await app.request('POST', '/api/templates', { token: owner.accessToken, headers: { 'X-Team-Id': teamId }, body: { name: 'Shared', outputFormats: ['pdf'], schema: { sections: [{ id: 's', components: [] }] } } });
    expect(created.status).toBe(201);
    const viewer = await addMember(app, owner, teamId, 'viewer');
    await withAppPage(browser, 'viewer', async (tab) => {
      const { page } = tab;
      await signIn(page, viewer.email, viewer.password);
      await byRole(page, 'heading', 'Templates').wait();
      // The viewer's own project comes first; switch to the owner's.
      await byRole(page, 'combobox', 'Project').click();
      const option = await page.waitForSelector(`aria/${teams.body.data[0].name}[role="option"]`);
      await option!.click();
      await byRole(page, 'link', 'Shared').wait();
      expect(await page.$('aria/New template[role="button"]')).toBeNull();
      expect(await page.$('aria/Start from an example[role="button"]')).toBeNull();
      await byRole(page, 'link', 'Shared').click();
      await byRole(page, 'heading', 'Shared').wait();
      expect(await page.$('aria/Publish[role="button"]')).toBeNull();
      expect(await page.$('aria/Save draft[role="button"]')).toBeNull();
      expect(await page.$eval('aria/Definition (JSON)[role="textbox"]', (area) => (area as HTMLTextAreaElement).readOnly)).toBe(true);
      await expectWellBehaved(tab, 'viewer template');
      await keepScreenshot(page, 'viewer-template');
    });
    const refused = await app.request('POST', `/api/templates/${created.body.id}/publish`, { token: viewer.accessToken, headers: { 'X-Team-Id': teamId }, body: {} });
    expect(refused.status).toBe(403);
  });
});
