import nodemailer, { type Transporter } from 'nodemailer';
import type { MailMessage, Mailer, SentMail } from './mailer';

export interface SmtpMailerOptions {
  /** `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...:465` (TLS from the start). */
  url: string;
  /** Sender address, e.g. `Formwork <no-reply@example.com>`. */
  from: string;
}

/**
 * Sends through an SMTP relay with nodemailer. Timeouts are short because sending runs inside
 * Temporal activities, which retry: a hung relay should fail an attempt, not stall it for minutes.
 */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;
  private readonly from: string;

  constructor(options: SmtpMailerOptions) {
    this.from = options.from;
    this.transport = nodemailer.createTransport({
      url: options.url,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  async send(message: MailMessage): Promise<SentMail> {
    const info = await this.transport.sendMail({
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      ...(message.replyTo ? { replyTo: message.replyTo } : {}),
      ...(message.attachments?.length ? { attachments: message.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })) } : {}),
      ...(message.headers ? { headers: message.headers } : {}),
      ...(message.messageId ? { messageId: message.messageId } : {}),
    });
    return { messageId: String(info.messageId) };
  }

  async check(): Promise<void> {
    await this.transport.verify();
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
