import { layout, type EmailMessage } from './emails';

/**
 * Sent when deletion is requested. It says what will go and until when the account can be
 * restored, so an unexpected request (a stolen session) is noticed in time.
 */
export function accountDeletionEmail(to: { email: string; name: string }, purgeAt: Date, restoreUrl: string): EmailMessage {
  const when = `${purgeAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const lines = [
    `Hello ${to.name},`,
    `We received a request to delete your Formwork account. On ${when} it will be deleted permanently, together with your personal project, the projects only you own, your API keys and your profile picture.`,
    `Until then you can restore it with your e-mail address and password: POST ${restoreUrl} with {"email", "password"}. Signing in is not possible while the deletion is pending.`,
    'If you did not ask for this, restore your account now and change your password.',
  ];
  return {
    to: to.email,
    subject: 'Your Formwork account will be deleted',
    text: `${lines.join('\n\n')}\n`,
    html: layout('Your account will be deleted', lines),
  };
}
