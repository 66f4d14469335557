import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';

/**
 * The pages for the links in account e-mails that work without script: fetched as a browser would,
 * forms posted urlencoded. The links themselves open the dashboard's pages when the app is built (and
 * these pages when it is not); their `<noscript>` leads here, to the same path under `/no-script`
 * (docs/web.md "Links in e-mails"; the app's pages: tests/integration/web/account-links.test.ts).
 */
describe('account pages without script: /no-script/verify-email and /no-script/reset-password', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** The link itself, exactly as the e-mail carries it. */
  async function emailedLink(user: SignedUpUser, subject: string, path: string): Promise<string> {
    const mail = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === subject);
    const link = new RegExp(`https?://\\S+${path}\\?token=\\S+`).exec(mail.text)?.[0];
    if (!link) throw new Error(`no ${path} link in ${mail.text}`);
    return link;
  }

  /** The page without script for an e-mailed link. */
  const noScript = (link: string) => link.replace(app.url, `${app.url}/no-script`);

  const postForm = (fields: Record<string, string>) =>
    app.request('POST', '/reset-password', { rawBody: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

  function expectSafeHtml(res: { status: number; headers: Headers; text: string }): void {
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).not.toMatch(/<script/i);
  }

  it('verifies the e-mail address from the link in the sign-up e-mail only when the page\'s button is pressed, once', async () => {
    const user = await signUp(app);
    const link = await emailedLink(user, 'Confirm your e-mail address', '/verify-email');
    expect(link.startsWith(`${app.url}/verify-email?token=`)).toBe(true);
    const token = new URL(link).searchParams.get('token')!;
    const emailVerified = async () => (await app.request('GET', '/api/users/me', { token: user.accessToken })).body.emailVerified;

    // Opening the page (as a mail scanner does, even several times) only shows a form that POSTs the token.
    for (let i = 0; i < 2; i++) {
      const page = await fetch(noScript(link));
      const text = await page.text();
      expect(page.status).toBe(200);
      expectSafeHtml({ status: page.status, headers: page.headers, text });
      expect(text).toContain('<form method="post" action="/verify-email">');
      expect(text).toContain(`<input type="hidden" name="token" value="${token}">`);
      expect(text).not.toContain('<script');
    }
    expect(await emailVerified()).toBe(false);

    const confirm = () =>
      app.request('POST', '/verify-email', { rawBody: new URLSearchParams({ token }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const confirmed = await confirm();
    expect(confirmed.status).toBe(200);
    expectSafeHtml(confirmed);
    expect(confirmed.text).toContain('E-mail address confirmed');
    expect(await emailVerified()).toBe(true);

    const again = await confirm();
    expect(again.status).toBe(400);
    expect(again.text).toContain('Could not confirm your e-mail address');
    const reopened = await fetch(noScript(link));
    expect(reopened.status).toBe(400);
    expect(await reopened.text()).toContain('Could not confirm your e-mail address');
  });

  it('refuses a forged verification token posted from the page', async () => {
    const res = await app.request('POST', '/verify-email', { rawBody: new URLSearchParams({ token: '<b>forged</b>' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(400);
    expectSafeHtml(res);
    expect(res.text).toContain('invalid, has already been used or has expired');
    expect(res.text).not.toContain('<b>forged</b>');
  });

  it('shows a failure page for a missing or unknown verification token', async () => {
    for (const path of ['/no-script/verify-email', '/no-script/verify-email?token=nope', `/no-script/verify-email?token=${encodeURIComponent('<b>x</b>')}`]) {
      const res = await app.request('GET', path);
      expect(res.status).toBe(400);
      expectSafeHtml(res);
      expect(res.text).toContain('invalid, has already been used or has expired');
      expect(res.text).not.toContain('<b>x</b>');
    }
  });

  it('resets the password through the form in the reset e-mail, and refuses the link afterwards', async () => {
    const user = await signUp(app);
    await app.request('POST', '/api/auth/forgot-password', { body: { email: user.email } });
    const link = await emailedLink(user, 'Reset your password', '/reset-password');
    const token = new URL(link).searchParams.get('token')!;

    const form = await fetch(noScript(link));
    const html = await form.text();
    expect(form.status).toBe(200);
    expectSafeHtml({ status: form.status, headers: form.headers, text: html });
    expect(html).toContain('<form method="post" action="/reset-password">');
    expect(html).toContain(`<input type="hidden" name="token" value="${token}">`);
    expect(html).toMatch(/name="newPassword"/);
    // Showing the form, or opening the link itself, does not use the token up.
    expect((await fetch(link)).status).toBe(200);
    expect((await fetch(noScript(link))).status).toBe(200);

    const mismatch = await postForm({ token, newPassword: 'a fresh password', confirmPassword: 'another one' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain('The two passwords do not match.');
    expect(mismatch.text).toContain(`value="${token}"`);
    const short = await postForm({ token, newPassword: 'short', confirmPassword: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('at least 8 characters');

    const done = await postForm({ token, newPassword: 'a fresh password', confirmPassword: 'a fresh password' });
    expect(done.status).toBe(200);
    expectSafeHtml(done);
    expect(done.text).toContain('Password changed');
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'a fresh password' } })).status).toBe(200);
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status).toBe(401);

    const reused = await postForm({ token, newPassword: 'yet another one', confirmPassword: 'yet another one' });
    expect(reused.status).toBe(400);
    expect(reused.text).toContain('Could not reset your password');
    const stale = await fetch(noScript(link));
    expect(stale.status).toBe(400);
    expect(await stale.text()).not.toContain('<form');
  });

  it('escapes whatever comes back in the form', async () => {
    const evil = '"><script>alert(1)</script>';
    const res = await postForm({ token: evil, newPassword: 'short', confirmPassword: 'short' });
    expect(res.status).toBe(400);
    expectSafeHtml(res);
    expect(res.text).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    const unknown = await postForm({ token: evil, newPassword: 'long enough pw', confirmPassword: 'long enough pw' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Could not reset your password');
    // Neither the page without script nor the link's own page (the app's, whose <noscript> repeats the token) writes it unescaped.
    for (const path of ['/no-script/reset-password', '/reset-password', '/verify-email']) {
      const page = await app.request('GET', `${path}?token=${encodeURIComponent(evil)}`);
      expect({ path, raw: page.text.includes('"><script>alert(1)') }).toEqual({ path, raw: false });
    }
  });
});
