/**
 * The two small pages that e-mailed links open (verify-email, reset-password). Plain HTML with
 * inline styles and no JavaScript; every interpolated value is escaped.
 */

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#1d2330;background:#f5f6f8;margin:0}
main{max-width:440px;margin:64px auto;background:#fff;border-radius:8px;padding:32px;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h1{font-size:22px;margin:0 0 16px}p{line-height:1.5}label{display:block;margin:16px 0 4px;font-weight:600}
input[type=password],input[type=email],input[type=text]{width:100%;box-sizing:border-box;padding:10px;border:1px solid #c8cdd6;border-radius:6px;font-size:16px}
button{margin-top:24px;background:#1f4fd1;color:#fff;border:0;border-radius:6px;padding:12px 20px;font-size:16px;cursor:pointer}
.error{color:#b42318;background:#fef3f2;border-radius:6px;padding:10px}.ok{color:#067647}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)} · Formwork</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

/** A page that only reports an outcome. */
export function messagePage(title: string, message: string, kind: 'ok' | 'error'): string {
  return page(title, `<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${escapeHtml(message)}</p>`);
}

/**
 * What the verification link opens: one button that POSTs the token. Opening the link changes
 * nothing, so a mail scanner or link preview that fetches it does not confirm the address.
 */
export function verifyEmailForm(token: string): string {
  return page(
    'Confirm your e-mail address',
    `<p>Press the button to confirm that this e-mail address is yours.</p>
<form method="post" action="/verify-email">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Confirm my e-mail address</button>
</form>`,
  );
}

/** The new-password form; the token travels in a hidden field, the error (if any) above the fields. */
export function resetPasswordForm(token: string, error?: string): string {
  const alert = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
  return page(
    'Choose a new password',
    `${alert}<form method="post" action="/reset-password">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<label for="newPassword">New password</label>
<input type="password" id="newPassword" name="newPassword" minlength="8" maxlength="200" autocomplete="new-password" required>
<label for="confirmPassword">Repeat the new password</label>
<input type="password" id="confirmPassword" name="confirmPassword" minlength="8" maxlength="200" autocomplete="new-password" required>
<button type="submit">Set new password</button>
</form><p>Setting a new password signs you out on every device.</p>`,
  );
}

export interface InvitationView {
  id: string;
  teamName: string;
  role: string;
  email: string;
  expiresAt: Date;
}

/** The invitation behind an e-mailed link: who invites to what, and a sign-in form to accept or decline. */
export function invitationForm(inv: InvitationView, token: string, error?: string): string {
  const alert = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
  return page(
    `Join ${inv.teamName}`,
    `${alert}<p>You are invited to the Formwork project <strong>${escapeHtml(inv.teamName)}</strong> as <strong>${escapeHtml(inv.role)}</strong>.
The invitation is for ${escapeHtml(inv.email)} and works until ${escapeHtml(inv.expiresAt.toUTCString())}.</p>
<p>Sign in to answer it. No account yet? Sign up with this address first, then open the link again.</p>
<form method="post" action="/invitations/${escapeHtml(inv.id)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<label for="email">E-mail</label>
<input type="email" id="email" name="email" value="${escapeHtml(inv.email)}" autocomplete="username" required>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<label for="code">Two-factor code (if you use one)</label>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code">
<button type="submit" name="decision" value="accept">Accept and join</button>
<button type="submit" name="decision" value="reject" style="background:#667">Decline</button>
</form>`,
  );
}
