import { layout, type EmailMessage } from './emails';

export interface InvitationEmailInput {
  to: string;
  projectName: string;
  role: string;
  /** Display name of whoever sent the invitation (null when that account is gone). */
  inviterName: string | null;
  link: string;
  expiresAt: Date;
}

/** The e-mail inviting someone to a project; the link carries the accept token. */
export function invitationEmail(input: InvitationEmailInput): EmailMessage {
  const who = input.inviterName ?? 'A Formwork user';
  const until = input.expiresAt.toISOString().replace('T', ' ').slice(0, 16);
  const lines = [
    `${who} invited you to join the project "${input.projectName}" on Formwork as ${input.role}.`,
    'Sign in (or sign up) with this e-mail address and accept the invitation.',
    `The invitation is valid until ${until} UTC. If you did not expect it, ignore this message.`,
  ];
  const subject = `You are invited to join ${input.projectName} on Formwork`;
  return {
    to: input.to,
    subject,
    text: `${lines.join('\n\n')}\n\n${input.link}\n`,
    html: layout(subject, lines, { label: 'View invitation', url: input.link }),
  };
}
