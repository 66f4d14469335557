import { escapeHtml } from '../identity/account-pages.html';
import type { ApprovalRow } from './approvals.presenter';

/**
 * The review page at PUBLIC_URL/review (docs/flow.md, "Review page"): plain HTML forms, inline
 * styles, no JavaScript; every interpolated value is escaped.
 */

const STYLE = `body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#1d2330;background:#f5f6f8;margin:0}
main{max-width:720px;margin:48px auto;background:#fff;border-radius:8px;padding:32px;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h1{font-size:22px;margin:0 0 16px}h2{font-size:16px;margin:24px 0 8px}p{line-height:1.5}
label{display:block;margin:16px 0 4px;font-weight:600}
input[type=email],textarea{width:100%;box-sizing:border-box;padding:10px;border:1px solid #c8cdd6;border-radius:6px;font-size:16px;font-family:inherit}
pre{background:#f5f6f8;border-radius:6px;padding:12px;overflow:auto;max-height:480px;font-size:13px}
button{margin-top:16px;border:0;border-radius:6px;padding:12px 20px;font-size:16px;cursor:pointer;color:#fff;background:#1f4fd1}
button.approve{background:#067647}button.reject{background:#b42318}.row{display:flex;gap:16px;flex-wrap:wrap}.row form{flex:1;min-width:240px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}dt{color:#667}dd{margin:0}
.error{color:#b42318;background:#fef3f2;border-radius:6px;padding:10px}.ok{color:#067647;background:#ecfdf3;border-radius:6px;padding:10px}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)} · Formwork review</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

const alert = (error?: string) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '');

/** Step 1: the approver proves who they are by typing the address the link was sent to. */
export function confirmEmailPage(token: string, error?: string): string {
  return page(
    'Confirm your e-mail address',
    `${alert(error)}<p>This review link was sent to an approver. Enter that e-mail address to continue.</p>
<form method="post" action="/review">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<label for="email">E-mail address</label>
<input type="email" id="email" name="email" maxlength="320" autocomplete="email" required>
<button type="submit" id="continue">Continue</button>
</form>
<form method="post" action="/review/resend"><input type="hidden" name="token" value="${escapeHtml(token)}">
<p>Link expired or replaced? Enter your e-mail above and use the button there, or
<label for="resend-email">send me a new link at</label><input type="email" id="resend-email" name="email" maxlength="320" required>
<button type="submit">Send a new link</button></p></form>`,
  );
}

/** Step 2: what is to be decided, and the two decisions with an optional comment. */
export function approvalPage(a: ApprovalRow, payload: unknown, artefactUrl: string | null, error?: string): string {
  const pretty = typeof payload === 'string' ? payload : JSON.stringify(payload, null, 2);
  const artefact = artefactUrl ? `<p><a id="artefact" href="${escapeHtml(artefactUrl)}" rel="noopener noreferrer">Open the rendered document</a></p>` : '';
  const decide = (action: 'approve' | 'reject', label: string) => `<form method="post" action="/review/approvals/${escapeHtml(a.id)}/decision">
<input type="hidden" name="decision" value="${action}">
<label for="comment-${action}">Comment (optional)</label>
<textarea id="comment-${action}" name="comment" maxlength="1000" rows="3"></textarea>
<button type="submit" class="${action}" id="${action}">${label}</button></form>`;
  const forms = a.status === 'pending' ? `<div class="row">${decide('approve', 'Approve')}${decide('reject', 'Reject')}</div>` : `<p class="ok">This approval is ${escapeHtml(a.status)}.</p>`;
  return page(
    `Review: ${a.gate_name}`,
    `${alert(error)}<dl><dt>Run</dt><dd>${escapeHtml(a.run_short_id)}</dd><dt>Approver</dt><dd>${escapeHtml(a.approver_email)}</dd>
<dt>Status</dt><dd id="status">${escapeHtml(a.status)}</dd>${a.magic_token_expires_at ? `<dt>Decide by</dt><dd>${escapeHtml(new Date(a.magic_token_expires_at).toISOString())}</dd>` : ''}</dl>
<h2>Submitted data</h2><pre id="payload">${escapeHtml(pretty ?? '')}</pre>${artefact}${forms}`,
  );
}

export function inboxPage(approvals: ApprovalRow[]): string {
  const items = approvals.map((a) => `<li><a href="/review/approvals/${escapeHtml(a.id)}">${escapeHtml(a.gate_name)}: run ${escapeHtml(a.run_short_id)}</a></li>`).join('');
  return page('Waiting for your review', approvals.length ? `<ul>${items}</ul>` : '<p>Nothing is waiting for you.</p>');
}

export function resultPage(title: string, message: string, kind: 'ok' | 'error'): string {
  return page(title, `<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}" id="result">${escapeHtml(message)}</p>`);
}
