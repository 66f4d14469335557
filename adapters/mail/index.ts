import { join } from 'node:path';
import type { Config } from '../../domain/config';
import type { MailLog, Mailer } from './mailer';
import { OutboxMailer } from './outbox-mailer';
import { SmtpMailer } from './smtp-mailer';

export type { MailLog, MailMessage, Mailer } from './mailer';
export { OutboxMailer, type OutboxMessage } from './outbox-mailer';
export { SmtpMailer } from './smtp-mailer';

const consoleLog: MailLog = {
  info: (msg, fields) => console.log(JSON.stringify({ time: new Date().toISOString(), level: 'info', msg, ...fields })),
};

/** SMTP when SMTP_URL is set, else the local outbox under DATA_DIR (contract §1). */
export function createMailer(config: Pick<Config, 'mail' | 'dataDir'>, deps: { log?: MailLog } = {}): Mailer {
  if (config.mail.smtpUrl) return new SmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from });
  return new OutboxMailer({ dir: join(config.dataDir, 'outbox'), from: config.mail.from, log: deps.log ?? consoleLog });
}
