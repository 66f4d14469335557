import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailLog, MailMessage, Mailer, SentMail } from './mailer';

export interface OutboxMailerOptions {
  /** Usually `DATA_DIR/outbox`. */
  dir: string;
  from: string;
  log: MailLog;
}

/** What one outbox file holds: attachments by name and size, not their bytes. */
export interface OutboxMessage extends Omit<MailMessage, 'attachments'> {
  attachments?: Array<{ filename: string; contentType: string; bytes: number }>;
  id: string;
  messageId: string;
  from: string;
  createdAt: string;
}

const LINK = /\bhttps?:\/\/[^\s<>"')\]]+/g;

/** The links a reader of the message would click: what a developer needs from the log. */
export function findLinks(text: string): string[] {
  return [...new Set(text.match(LINK) ?? [])];
}

/**
 * Development stand-in for SMTP: each message becomes `<outbox>/<timestamp>-<id>.json`, and one
 * log line names its recipient, subject and links, so signing up or approving a run works on a
 * machine without a mail server. File names sort by time of sending.
 */
export class OutboxMailer implements Mailer {
  constructor(private readonly options: OutboxMailerOptions) {}

  get dir(): string {
    return this.options.dir;
  }

  async send(message: MailMessage): Promise<SentMail> {
    const id = randomUUID();
    const now = new Date();
    const record: OutboxMessage = {
      id,
      messageId: message.messageId ?? `<${id}@outbox.formwork.local>`,
      from: this.options.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      ...(message.replyTo ? { replyTo: message.replyTo } : {}),
      ...(message.headers ? { headers: message.headers } : {}),
      ...(message.attachments?.length
        ? { attachments: message.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, bytes: a.content.length })) }
        : {}),
      createdAt: now.toISOString(),
    };
    const name = `${now.toISOString().replace(/[:.]/g, '-')}-${id}.json`;
    const file = join(this.options.dir, name);
    await mkdir(this.options.dir, { recursive: true });
    // Written aside and renamed, so whoever watches the outbox never reads half a message.
    const tmp = join(this.options.dir, `.${name}.tmp`);
    await writeFile(tmp, JSON.stringify(record, null, 2));
    await rename(tmp, file);
    this.options.log.info('mail written to outbox', {
      to: message.to,
      subject: message.subject,
      links: findLinks(message.text),
      file,
    });
    return { messageId: record.messageId };
  }

  async check(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    await access(this.options.dir, constants.W_OK);
  }
}
