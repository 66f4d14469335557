import { layout, type EmailMessage } from '../identity/emails';

/**
 * E-mails of the approval path (docs/flow.md, "Approvals"): approvers' magic links (the gate, the
 * run, what is submitted in one line and the deadline) and owners' notices (each run linked to its
 * page in the dashboard).
 */

export type ApprovalEmailKind = 'request' | 'reminder' | 'resend';

export function reviewLink(publicUrl: string, token: string): string {
  return `${publicUrl}/review?token=${encodeURIComponent(token)}`;
}

/** The run's page in the dashboard (docs/web.md "Flow: runs and the approvals inbox"). */
function runLink(publicUrl: string, runId: string): string {
  return `${publicUrl}/flow/runs/${encodeURIComponent(runId)}`;
}

/** "29 Nov 2026, 14:05 UTC": the e-mail cannot know the reader's zone (the page shows theirs). */
export function deadlineText(at: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  return `${parts} UTC`;
}

export function approvalRequestEmail(input: {
  kind: ApprovalEmailKind;
  to: { email: string; name: string | null };
  gateName: string;
  runShortId: string;
  /** One line of what was submitted (domain/flow/review-summary.ts); empty when there is nothing to say. */
  summary: string;
  link: string;
  expiresAt: Date;
}): EmailMessage {
  const subject =
    input.kind === 'reminder' ? `Reminder: approval needed for ${input.gateName}` : `Approval needed for ${input.gateName}`;
  const lines = [
    `Hello ${input.to.name ?? input.to.email},`,
    `A submission to "${input.gateName}" (run ${input.runShortId}) is waiting for your approval.`,
    ...(input.summary ? [`Summary: ${input.summary}`] : []),
    `Decide by ${deadlineText(input.expiresAt)}.`,
    input.kind === 'reminder'
      ? 'The time to decide ends soon; this link replaces the one sent earlier.'
      : input.kind === 'resend'
        ? 'This link replaces the one sent earlier. Open it, confirm your e-mail address, then read the document and approve or reject.'
        : 'Open the link, confirm your e-mail address, then read the document and approve or reject.',
    'The link can be opened once; if you need it again, the page sends you a new one.',
  ];
  return {
    to: input.to.email,
    subject,
    text: `${lines.join('\n\n')}\n\n${input.link}\n`,
    html: layout(subject, lines, { label: 'Review and decide', url: input.link }),
  };
}

export interface ReviewNoticeRun {
  gateName: string;
  runShortId: string;
  runId: string;
  enteredAt: Date;
}

/** To a gate's owners: one run (`immediate`) or every run since the last digest (`digest`), each linked to its page. */
export function reviewNoticeEmail(to: { email: string; name: string }, runs: ReviewNoticeRun[], publicUrl: string): EmailMessage {
  const subject = runs.length === 1 ? `Run ${runs[0].runShortId} needs review` : `${runs.length} runs need review`;
  const lines = [
    `Hello ${to.name},`,
    runs.length === 1 ? 'A Flow run is waiting for approval:' : 'These Flow runs entered review since the last digest:',
    ...runs.map((r) => `${r.gateName}: run ${r.runShortId} (${r.runId}), since ${deadlineText(r.enteredAt)}: ${runLink(publicUrl, r.runId)}`),
  ];
  const action = runs.length === 1 ? { label: 'Open the run', url: runLink(publicUrl, runs[0].runId) } : undefined;
  return { to: to.email, subject, text: `${lines.join('\n\n')}\n`, html: layout(subject, lines, action) };
}
