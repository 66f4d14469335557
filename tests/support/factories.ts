import { randomBytes } from 'node:crypto';
import type { ParsedMail } from './smtp-server';
import type { TestApp } from './app';

export function buildSignup(overrides: Partial<{ email: string; password: string; name: string }> = {}) {
  const id = randomBytes(4).toString('hex');
  return { email: `user-${id}@example.com`, password: 'correct horse battery', name: `User ${id}`, ...overrides };
}

export interface SignedUpUser {
  id: string;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
}

/** Signs a user up through the API; with `verified`, also follows the e-mailed verification link. */
export async function signUp(app: TestApp, opts: { verified?: boolean; overrides?: Parameters<typeof buildSignup>[0] } = {}): Promise<SignedUpUser> {
  const input = buildSignup(opts.overrides);
  const res = await app.request('POST', '/api/auth/signup', { body: input });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  const user = { id: res.body.user.id, email: input.email, password: input.password, accessToken: res.body.accessToken, refreshToken: res.body.refreshToken };
  if (opts.verified) {
    const mail = await app.smtp!.waitForMessage((m) => m.to.includes(input.email) && /confirm/i.test(m.subject));
    const verify = await app.request('POST', '/api/auth/verify-email', { body: { token: linkToken(mail, '/verify-email') } });
    if (verify.status !== 200) throw new Error(`verify failed: ${verify.status} ${verify.text}`);
  }
  return user;
}

/** The `token` query parameter of the first link to `path` in a message's text. */
export function linkToken(mail: ParsedMail, path: string): string {
  const match = new RegExp(`https?://[^\\s]+${path.replace('/', '\\/')}\\?token=([^\\s&]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return decodeURIComponent(match[1]);
}
