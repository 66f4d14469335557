import { layout, type EmailMessage } from '../identity/emails';

/** E-mails of the approval path (docs/flow.md, "Approvals"): approvers' magic links and owners' notices. */

export type ApprovalEmailKind = 'request' | 'reminder' | 'resend';

export function reviewLink(publicUrl: string, token: string): string {
  return `${publicUrl}/review?token=${encodeURIComponent(token)}`;
}

export function approvalRequestEmail(input: {
  kind: ApprovalEmailKind;
  to: { email: string; name: string | null };
  gateName: string;
  runShortId: string;
  link: string;
  expiresAt: Date;
}): EmailMessage {
  const subject =
    input.kind === 'reminder' ? `Reminder: approval needed for ${input.gateName}` : `Approval needed for ${input.gateName}`;
  const lines = [
    `Hello ${input.to.name ?? input.to.email},`,
    `A submission to "${input.gateName}" (run ${input.runShortId}) is waiting for your review.`,
    input.kind === 'reminder' ? 'The review window closes soon; this link replaces the one sent earlier.' : 'Open the link, confirm your e-mail address, then approve or reject.',
    `The link works until ${input.expiresAt.toISOString()} or until you decide.`,
  ];
  return {
    to: input.to.email,
    subject,
    text: `${lines.join('\n\n')}\n\n${input.link}\n`,
    html: layout(subject, lines, { label: 'Review the submission', url: input.link }),
  };
}

export interface ReviewNoticeRun {
  gateName: string;
  runShortId: string;
  runId: string;
  enteredAt: Date;
}

/** To a gate's owners: one run (`immediate`) or every run since the last digest (`digest`). */
export function reviewNoticeEmail(to: { email: string; name: string }, runs: ReviewNoticeRun[]): EmailMessage {
  const subject = runs.length === 1 ? `Run ${runs[0].runShortId} needs review` : `${runs.length} runs need review`;
  const lines = [
    `Hello ${to.name},`,
    runs.length === 1 ? 'A Flow run is waiting for approval:' : 'These Flow runs entered review since the last digest:',
    ...runs.map((r) => `${r.gateName}: run ${r.runShortId} (${r.runId}), since ${r.enteredAt.toISOString()}`),
  ];
  return { to: to.email, subject, text: `${lines.join('\n\n')}\n`, html: layout(subject, lines) };
}
