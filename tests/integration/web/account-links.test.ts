import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { buildSignup, signUp } from '../../support/factories';
import { solidPng } from '../../support/rendering-pdf';
import { createTeam, inTeam, invitationMail, invite } from '../../support/teams';

/**
 * The links in e-mails open pages of the app (docs/web.md "Links in e-mails"): confirming the address,
 * choosing a new password after "Forgot your password?", answering an invitation; opening a link (a mail
 * scanner does) changes nothing, only the person's click does. And the rest of the account: the profile
 * picture in Settings and the header, restoring a deleted account from the sign-in page.
 */
describe('account links and the rest of the account in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let files: string;
  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser());
    files = await mkdtemp(join(tmpdir(), 'account-links-'));
  });
  afterAll(() => closeAppWithBrowser(app, browser));

  // Chromium's accessibility tree calls role="img" and <img> "image".
  const linkIn = (text: string, path: string) => new RegExp(`https?://\\S+${path}\\?token=[^\\s]+`).exec(text)![0];
  const row = async (sql: string, params: unknown[]) => (await app.services.db.query(sql, params))[0];

  /**
   * What a mail scanner does with a link: fetches it, as a page and as anything. It gets the app's page,
   * whose <noscript> names the page that works without script, and nothing else happens.
   */
  async function scan(link: string, noScriptPath: string): Promise<void> {
    for (const accept of ['text/html,application/xhtml+xml', '*/*']) {
      const res = await fetch(link, { headers: { Accept: accept } });
      const html = await res.text();
      expect({ accept, status: res.status, app: html.includes('<div id="root">') }).toEqual({ accept, status: 200, app: true });
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(html).toContain(`<a href="${noScriptPath}?token=`);
    }
  }

  it('signs up in the app and confirms the address on the app\'s page of the e-mailed link, only when its button is pressed', async () => {
    const person = buildSignup();
    await withAppPage(browser, 'verify-email', async (tab) => {
      const { page } = tab;
      await page.goto(`${app.url}/sign-up`);
      await byRole(page, 'textbox', 'Name').fill(person.name);
      await byRole(page, 'textbox', 'Email').fill(person.email);
      await page.locator('aria/Password').fill(person.password);
      await byRole(page, 'button', 'Create account').click();
      await byRole(page, 'heading', 'Templates').wait();
      const verifiedAt = async () => (await row(`SELECT email_verified_at FROM users WHERE email = $1`, [person.email])).email_verified_at;

      const mail = await app.smtp!.waitForMessage((m) => m.to.includes(person.email) && m.subject === 'Confirm your e-mail address');
      const link = linkIn(mail.text, '/verify-email');
      expect(link.startsWith(`${app.url}/verify-email?token=`)).toBe(true);
      await scan(link, '/no-script/verify-email');
      // The app's page itself, opened and not pressed: nothing either.
      await page.goto(link);
      await byRole(page, 'button', 'Confirm my e-mail address').wait();
      await expectWellBehaved(tab, app.url, 'verify-email');
      await keepScreenshot(page, 'verify-email');
      expect(await verifiedAt()).toBeNull();

      await byRole(page, 'button', 'Confirm my e-mail address').click();
      await waitForText(page, 'E-mail address confirmed');
      expect(await verifiedAt()).not.toBeNull();
      await keepScreenshot(page, 'verify-email-done');
      // Signed in here: on into the app, where the address shows as confirmed.
      await byRole(page, 'link', 'Continue to Formwork').click();
      await byRole(page, 'link', 'Settings').click();
      await waitForText(page, `(${person.email})`);
      expect(await page.evaluate(() => document.body.textContent)).not.toContain('not confirmed yet');

      // The link is used up: pressing again says so with the API's message.
      await page.goto(link);
      await byRole(page, 'button', 'Confirm my e-mail address').click();
      await waitForText(page, 'Could not confirm your e-mail address');
      await waitForText(page, 'ERR_AUTH_007');
    });
  });

  it('sends the reset link from "Forgot your password?", and the app\'s page of that link sets the new password', async () => {
    const user = await signUp(app, { verified: true });
    await withAppPage(browser, 'reset-password', async (tab) => {
      const { page } = tab;
      await page.goto(`${app.url}/sign-in`);
      await byRole(page, 'textbox', 'Email').fill(user.email);
      await byRole(page, 'link', 'Forgot your password?').click();
      // The address typed on the sign-in page comes along.
      const email = await byRole(page, 'textbox', 'Email').waitHandle();
      expect(await email.evaluate((el) => (el as HTMLInputElement).value)).toBe(user.email);
      await expectWellBehaved(tab, app.url, 'forgot-password');
      await byRole(page, 'button', 'Send the link').click();
      await waitForText(page, 'Look in your inbox');
      await keepScreenshot(page, 'forgot-password-sent');

      const mail = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Reset your password');
      const link = linkIn(mail.text, '/reset-password');
      const passwordHash = async () => (await row(`SELECT password_hash FROM users WHERE id = $1`, [user.id])).password_hash;
      const before = await passwordHash();
      await scan(link, '/no-script/reset-password');
      expect(await passwordHash()).toBe(before);

      await page.goto(link);
      await page.locator('aria/New password').fill('a brand new secret');
      await page.locator('aria/Repeat the new password').fill('a brand new secrey');
      await byRole(page, 'button', 'Set new password').click();
      await waitForText(page, 'The two passwords do not match.');
      expect(await passwordHash()).toBe(before);
      await expectWellBehaved(tab, app.url, 'reset-password');
      await keepScreenshot(page, 'reset-password');
      await page.locator('aria/Repeat the new password').fill('a brand new secret');
      await byRole(page, 'button', 'Set new password').click();
      await waitForText(page, 'Password changed');

      await byRole(page, 'link', 'Sign in').click();
      await signInThroughApp(page, app.url, user.email, 'a brand new secret');
      await byRole(page, 'heading', 'Templates').wait();
    });
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'a brand new secret' } })).status).toBe(200);
  });

  it('opens an invitation link in the app: sign in first, back to the invitation, accept; a second one declined', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app, { verified: true });
    const joined = await createTeam(app, owner, { name: `Ledger ${randomBytes(2).toString('hex')}` });
    const declined = await createTeam(app, owner, { name: `Archive ${randomBytes(2).toString('hex')}` });
    const first = await invite(app, owner, joined.id, invitee.email, 'viewer');
    const second = await invite(app, owner, declined.id, invitee.email, 'member');
    const firstLink = linkIn((await invitationMail(app, first.id)).mail.text, `/invitations/${first.id}`);
    const secondLink = linkIn((await invitationMail(app, second.id)).mail.text, `/invitations/${second.id}`);
    const status = async (id: string) => (await row(`SELECT status FROM invitations WHERE id = $1`, [id])).status;
    const membership = async (teamId: string) => row(`SELECT role FROM memberships WHERE project_id = $1 AND user_id = $2`, [teamId, invitee.id]);

    await scan(firstLink, `/no-script/invitations/${first.id}`);
    await scan(secondLink, `/no-script/invitations/${second.id}`);
    expect([await status(first.id), await status(second.id), await membership(joined.id)]).toEqual(['pending', 'pending', undefined]);

    await withAppPage(browser, 'invitation', async (tab) => {
      const { page } = tab;
      await page.goto(firstLink);
      await waitForText(page, `Join ${joined.name}`);
      await waitForText(page, `invites you to the Formwork project ${joined.name} as a viewer`);
      await expectWellBehaved(tab, app.url, 'invitation, signed out');
      await keepScreenshot(page, 'invitation-signed-out');
      await byRole(page, 'link', 'Sign in to answer').click();
      // The invited address is filled in; signing in comes back to the invitation.
      const email = await byRole(page, 'textbox', 'Email').waitHandle();
      expect(await email.evaluate((el) => (el as HTMLInputElement).value)).toBe(invitee.email);
      await page.locator('aria/Password').fill(invitee.password);
      await byRole(page, 'button', 'Sign in').click();
      await byRole(page, 'button', 'Accept').wait();
      expect(await status(first.id)).toBe('pending');
      await expectWellBehaved(tab, app.url, 'invitation, signed in');
      await keepScreenshot(page, 'invitation-signed-in');
      await byRole(page, 'button', 'Accept').click();
      await waitForText(page, `You are now a viewer of ${joined.name}.`);
      expect(await membership(joined.id)).toEqual({ role: 'viewer' });
      // The joined project is the one chosen in the app.
      await byRole(page, 'link', `Open ${joined.name}`).click();
      const project = await byRole(page, 'combobox', 'Project').waitHandle();
      await page.waitForFunction((el, name) => (el as HTMLInputElement).value === name, {}, project, joined.name);

      await page.goto(secondLink);
      await byRole(page, 'button', 'Decline').click();
      await byRole(page, 'button', 'Decline invitation').click();
      await waitForText(page, `You declined the invitation to ${declined.name}.`);
    });
    const members = await app.request('GET', '/api/teams/members', { token: owner.accessToken, headers: inTeam(joined.id) });
    expect(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      [invitee.email, 'viewer'],
    ]);
    expect([await status(first.id), await status(second.id), await membership(declined.id)]).toEqual(['accepted', 'rejected', undefined]);
  });

  it('tells someone signed in as another address that the invitation is not theirs, and offers nothing to answer', async () => {
    const owner = await signUp(app, { verified: true });
    const other = await signUp(app, { verified: true });
    const team = await createTeam(app, owner);
    const inv = await invite(app, owner, team.id, `someone-${randomBytes(3).toString('hex')}@example.com`);
    const link = linkIn((await invitationMail(app, inv.id)).mail.text, `/invitations/${inv.id}`);
    await withAppPage(browser, 'invitation-not-theirs', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, other.email, other.password);
      await byRole(page, 'heading', 'Templates').wait();
      await page.goto(link);
      await waitForText(page, 'This invitation is for another address');
      expect(await page.$('aria/Accept[role="button"]')).toBeNull();
      await byRole(page, 'button', 'Sign out').wait();
      await expectWellBehaved(tab, app.url, 'invitation, another address');
    });
    expect(await row(`SELECT status FROM invitations WHERE id = $1`, [inv.id])).toEqual({ status: 'pending' });
  });

  it('uploads a profile picture in Settings, shows it in the header, refuses a non-image with the API\'s message and a file over the limit, and removes it', async () => {
    const user = await signUp(app, { verified: true });
    const picture = solidPng(96, 96, [0x2b, 0x8a, 0x3e]);
    const paths = { picture: join(files, 'me.png'), text: join(files, 'notes.png'), big: join(files, 'huge.png') };
    await writeFile(paths.picture, picture);
    await writeFile(paths.text, 'Not a picture at all, whatever the name says.');
    await writeFile(paths.big, Buffer.concat([picture, Buffer.alloc(3 * 1024 * 1024)]));
    const avatarKey = async () => (await row(`SELECT avatar_key FROM users WHERE id = $1`, [user.id])).avatar_key;
    const choose = async (page: Page, file: string) => {
      const [chooser] = await Promise.all([page.waitForFileChooser(), byRole(page, 'button', 'Upload a picture').click()]);
      await chooser.accept([file]);
    };

    await withAppPage(browser, 'avatar', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'link', 'Settings').click();
      await waitForRegionText(page, 'Profile', 'JPEG, PNG or WebP, at most 2 MB.');
      await byRole(page, 'image', `No picture yet: the initials of ${(await app.request('GET', '/api/users/me', { token: user.accessToken })).body.name}`).wait();

      await choose(page, paths.text);
      await waitForRegionText(page, 'Profile', 'Image must be a JPEG, PNG or WebP file (ERR_USER_008)');
      await choose(page, paths.big);
      await waitForRegionText(page, 'Profile', 'huge.png is 3 MB; a picture may be at most 2 MB.');
      expect(await avatarKey()).toBeNull();

      await choose(page, paths.picture);
      await waitForRegionText(page, 'Profile', 'Picture saved');
      // In the header, beside the address: the picture itself, loaded from this origin.
      const header = await byRole(page, 'image', 'Your picture').waitHandle();
      await page.waitForFunction((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth === 96, {}, header);
      expect(await header.evaluate((img) => ({ blob: (img as HTMLImageElement).src.startsWith('blob:'), header: img.closest('header')?.textContent ?? '' }))).toEqual({ blob: true, header: expect.stringContaining(user.email) });
      await byRole(page, 'image', 'Your profile picture').wait();
      await expectWellBehaved(tab, app.url, 'settings with a picture');
      await keepScreenshot(page, 'settings-avatar');
      expect(await avatarKey()).toMatch(/\.png$/);
      const stored = await fetch(`${app.url}/api/users/me/avatar`, { headers: { authorization: `Bearer ${user.accessToken}` } });
      expect(Buffer.from(await stored.arrayBuffer())).toEqual(picture);

      await byRole(page, 'button', 'Remove the picture').click();
      await page.waitForFunction(() => !document.querySelector('header img'));
      expect(await avatarKey()).toBeNull();
    });
  });

  it('restores a deleted account from the sign-in page and signs in', async () => {
    const user = await signUp(app, { verified: true });
    await withAppPage(browser, 'restore', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'link', 'Settings').click();
      await byRole(page, 'button', 'Delete my account').click();
      await page.locator('aria/Password to confirm').fill(user.password);
      await byRole(page, 'button', 'Delete the account').click();
      await byRole(page, 'button', 'Sign in').wait();
      expect(await row(`SELECT deletion_status FROM users WHERE id = $1`, [user.id])).toEqual({ deletion_status: 'pending' });

      await signInThroughApp(page, app.url, user.email, user.password);
      await waitForText(page, 'This account is about to be deleted');
      await expectWellBehaved(tab, app.url, 'sign-in, pending deletion');
      await keepScreenshot(page, 'sign-in-restore');
      await byRole(page, 'button', 'Restore my account').click();
      await byRole(page, 'heading', 'Templates').wait();
    });
    expect(await row(`SELECT deletion_status, deletion_requested_at FROM users WHERE id = $1`, [user.id])).toEqual({ deletion_status: null, deletion_requested_at: null });
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(200);
  });
});
