/**
 * The mail port: account emails, approval requests and notifications go through it.
 * With SMTP_URL set it is an SMTP transport; without, a local outbox (contract §1).
 */
export interface MailMessage {
  to: string;
  subject: string;
  /** Plain-text body; links in it are what the outbox logs for development. */
  text: string;
  html: string;
  /** Reply-To address (report channels name one). */
  replyTo?: string;
  /** Files sent with the message (report deliveries). */
  attachments?: MailAttachment[];
  /** Extra header lines; names and values must be free of line breaks (the caller's duty). */
  headers?: Record<string, string>;
  /** The Message-ID to send (`<local@domain>`): the same on every attempt of one delivery, so a repeat can be recognised. */
  messageId?: string;
}

export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface SentMail {
  messageId: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<SentMail>;
  /** Health probe: resolves when a message could be handed over now. */
  check(): Promise<void>;
  /** Releases connections (process shutdown, tests). */
  close?(): Promise<void>;
}

/** The slice of the service logger a mailer writes to (structurally the app's Logger). */
export interface MailLog {
  info(msg: string, fields?: Record<string, unknown>): void;
}
