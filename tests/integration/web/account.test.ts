import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, signInThroughApp, startAppWithBrowser, waitForRegionText, withAppPage } from '../../support/browser';
import { signUp } from '../../support/factories';
import { totp } from '../../support/totp';
import { waitFor } from '../../support/wait';

/** The account in Settings (docs/web.md "Account"): profile, e-mail preferences, 2FA off and new backup codes, the data, deletion. */
describe('the account in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(() => closeAppWithBrowser(app, browser));

  it('edits the profile and the e-mail preferences, renews backup codes, turns 2FA off, downloads the data and deletes the account', async () => {
    const user = await signUp(app, { verified: true });
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    const secret = setup.body.secret as string;
    expect((await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(secret) } })).status).toBe(200);
    const downloads = await mkdtemp(join(tmpdir(), 'account-'));
    await withAppPage(browser, 'account', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      // A code of the next time step: enabling claimed the current one (a code is good once).
      await byRole(page, 'textbox', 'Authentication code').fill(totp(secret, Date.now() + 30_000));
      await byRole(page, 'button', 'Sign in').click();
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'link', 'Settings').click();

      const name = await byRole(page, 'textbox', 'Name').waitHandle();
      await name.evaluate((el) => (el as HTMLInputElement).select());
      await page.keyboard.type('Ada Lovelace');
      await byRole(page, 'button', 'Save profile').click();
      await waitForRegionText(page, 'Profile', 'Profile saved');

      await byRole(page, 'checkbox', 'A weekly digest of your documents').click();
      await waitForRegionText(page, 'E-mail preferences', 'Preferences saved');
      await expectWellBehaved(tab, app.url, 'settings');

      await page.locator('aria/Password').fill(user.password);
      await byRole(page, 'button', 'New backup codes').click();
      const codes = await byRole(page, 'list', 'New backup codes').waitHandle();
      expect(await codes.evaluate((list) => list.querySelectorAll('li').length)).toBe(10);
      // The authenticator's codes of these 30 s are spent (turning it on, signing in): a new backup code works.
      const backup = await codes.evaluate((list) => list.querySelector('li')?.textContent?.trim() ?? '');
      await byRole(page, 'textbox', 'Code to turn it off').fill(backup);
      await byRole(page, 'button', 'Turn off two-factor authentication').click();
      await waitForRegionText(page, 'Two-factor authentication', 'Off.');

      await byRole(page, 'button', 'Download my data').click();
      const file = await waitFor(async () => (await readdir(downloads)).find((f) => f.endsWith('.json')), { what: 'the data export' });
      expect(await readFile(join(downloads, file), 'utf8')).toContain(user.email);

      await byRole(page, 'button', 'Delete my account').click();
      await page.locator('aria/Password to confirm').fill(user.password);
      await byRole(page, 'button', 'Delete the account').click();
      await byRole(page, 'button', 'Sign in').wait();
    }, { downloadPath: downloads });
    // What the API now says: the profile and the preference changed, 2FA is off (no code asked), the account is pending deletion.
    const login = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(login.status).toBe(403);
    expect(login.body.code).toBe('ERR_USER_004');
    const [row] = await app.services.db.query(`SELECT name, two_factor_enabled, email_preferences FROM users WHERE id = $1`, [user.id]);
    expect({ name: row.name, twoFactor: row.two_factor_enabled, weeklyDigest: row.email_preferences.weeklyDigest }).toEqual({ name: 'Ada Lovelace', twoFactor: false, weeklyDigest: true });
  });
});
