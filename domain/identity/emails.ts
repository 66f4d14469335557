/** Account e-mails as plain text and HTML. Links are built from PUBLIC_URL. */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export type AccountEmailPurpose = 'verify_email' | 'reset_password';

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function layout(title: string, paragraphs: string[], action?: { label: string; url: string }): string {
  const body = paragraphs.map((p) => `<p style="margin:0 0 16px">${escape(p)}</p>`).join('');
  const button = action
    ? `<p style="margin:24px 0"><a href="${escape(action.url)}" style="background:#1f4fd1;color:#fff;padding:12px 20px;border-radius:6px;text-decoration:none;display:inline-block">${escape(action.label)}</a></p><p style="font-size:12px;color:#667">Or paste this link into your browser: ${escape(action.url)}</p>`
    : '';
  return `<!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#1d2330;max-width:560px;margin:0 auto;padding:24px"><h1 style="font-size:20px">${escape(title)}</h1>${body}${button}<p style="font-size:12px;color:#667">Formwork</p></body></html>`;
}

export function accountEmail(purpose: AccountEmailPurpose, to: { email: string; name: string }, link: string, ttlHours: number): EmailMessage {
  if (purpose === 'verify_email') {
    const lines = [`Hello ${to.name},`, 'Please confirm your e-mail address to finish setting up your Formwork account.', `The link works for ${ttlHours} hours.`];
    return {
      to: to.email,
      subject: 'Confirm your e-mail address',
      text: `${lines.join('\n\n')}\n\n${link}\n`,
      html: layout('Confirm your e-mail address', lines, { label: 'Confirm e-mail address', url: link }),
    };
  }
  const lines = [`Hello ${to.name},`, 'Someone asked to reset the password of your Formwork account. If it was not you, ignore this message.', `The link works for ${ttlHours} hours.`];
  return {
    to: to.email,
    subject: 'Reset your password',
    text: `${lines.join('\n\n')}\n\n${link}\n`,
    html: layout('Reset your password', lines, { label: 'Choose a new password', url: link }),
  };
}

/** What was locked: the password step (login, invitation page, restore) or the two-factor step. */
export type LockedStep = 'password' | 'second_factor';

/** Sent once when repeated failures first lock a sign-in step of the account (docs/security.md). */
export function signInLockedEmail(to: { email: string; name: string }, step: LockedStep, lockSeconds: number): EmailMessage {
  const wait = lockSeconds >= 120 ? `${Math.round(lockSeconds / 60)} minutes` : `${lockSeconds} seconds`;
  const what =
    step === 'password'
      ? 'Someone entered a wrong password for your Formwork account several times in a row.'
      : 'Someone entered your correct password but a wrong two-factor code several times in a row. Your password may be known to someone else: change it now.';
  const lines = [
    `Hello ${to.name},`,
    what,
    `To protect the account, signing in is paused for ${wait}; every further failure doubles the wait. Nothing else in your account has changed.`,
    'If it was you, wait and try again. If it was not you, choose a new password ("Forgot password" on the sign-in page; a reset also signs out every session) and turn on two-factor authentication.',
  ];
  return {
    to: to.email,
    subject: 'Sign-in to your account was paused',
    text: `${lines.join('\n\n')}\n`,
    html: layout('Sign-in to your account was paused', lines),
  };
}
