import { buffer } from 'node:stream/consumers';
import { channelConfig, MAX_EMAIL_SUBJECT, type EmailChannelConfig } from '../../domain/reporting/channel-config';
import type { ChannelTarget } from '../../domain/reporting/channel-kinds';
import { fillTokens, oneLine } from '../../domain/reporting/message-text';
import type { MailAttachment } from '../mail/mailer';
import type { ChannelContext, ChannelSender, DeliveryFile, DeliveryMessage, SendResult } from './channel-sender';
import { itemLines, messageValues, plainLinks } from './sender-support';

/**
 * E-mail (docs/reporting.md "Channels"): one message per recipient through the Mailer port (privacy, and a delivery
 * record per recipient). The run's files are attached while their base64 size stays within
 * `maxAttachmentMb`, else the mail carries signed links (note `attachment_replaced_by_link`);
 * `attach: links` always links. SMTP 4xx and connection failures retry, 5xx is final.
 */

const DEFAULT_BODY = '{{report.name}}: run {{run.shortId}} {{run.status}} ({{run.scheduledFor | date}}).\n\n{{links}}';
/** The body with links filled in; a configured body is at most 10,000 characters before. */
const MAX_BODY_CHARS = 100_000;
const MIB = 1024 * 1024;

/** Bytes a file takes in the message: base64 (4 per 3) in 76-character lines with CRLF. */
const base64Size = (bytes: number) => Math.ceil(Math.ceil(bytes / 3) * 4 * (78 / 76));

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The plain text as HTML: escaped, links clickable, line breaks kept. */
function toHtml(text: string): string {
  const linked = escapeHtml(text).replace(/\bhttps?:\/\/[^\s<>"]+/g, (url) => `<a href="${url}">${url}</a>`);
  return `<!doctype html><html><body><div style="font-family:sans-serif;white-space:pre-wrap">${linked}</div></body></html>`;
}

interface Composed {
  subject: string;
  text: string;
  attachments?: MailAttachment[];
  note?: string;
}

async function compose(cfg: EmailChannelConfig, message: DeliveryMessage): Promise<Composed> {
  const files = message.files;
  let attachments: MailAttachment[] | undefined;
  let note: string | undefined;
  if (cfg.attach === 'files' && files.length > 0) {
    const total = files.reduce((n, f) => n + base64Size(f.bytes), 0);
    if (total <= cfg.maxAttachmentMb * MIB) attachments = await Promise.all(files.map(readAttachment));
    else note = 'attachment_replaced_by_link';
  }
  const values = messageValues(message);
  const links = plainLinks(files);
  const subject = oneLine(fillTokens(cfg.subject, { ...values, links: '' }, MAX_EMAIL_SUBJECT));
  const template = cfg.body ?? DEFAULT_BODY;
  let text = fillTokens(template, { ...values, links }, MAX_BODY_CHARS);
  // Files not attached must be reachable: their links go in even when the body names no {{links}}.
  if (!attachments && links && !/\{\{\s*links\s*\}\}/.test(template)) text = `${text}\n\n${links}`;
  const items = itemLines(message);
  if (items) text = `${text}\n\n${items}`;
  return { subject, text, attachments, note };
}

async function readAttachment(f: DeliveryFile): Promise<MailAttachment> {
  return { filename: f.filename, contentType: f.contentType, content: await buffer(await f.open()) };
}

/** A Mailer failure as a delivery outcome: nodemailer's `responseCode` is the SMTP reply; none means no connection. */
function mailFailure(err: unknown): SendResult {
  const code = (err as { responseCode?: unknown }).responseCode;
  if (typeof code === 'number' && code >= 400 && code < 500) return { outcome: 'retry', statusCode: code, error: `Mail server deferred the message (${code})` };
  if (typeof code === 'number' && code >= 500 && code < 600) return { outcome: 'permanent', statusCode: code, error: `Mail server refused the message (${code})` };
  const sys = (err as { code?: unknown }).code;
  return { outcome: 'retry', error: `Mail server not reachable${typeof sys === 'string' && /^[A-Z_]{1,40}$/.test(sys) ? ` (${sys})` : ''}` };
}

async function sendOne(ctx: ChannelContext, to: string, cfg: EmailChannelConfig, mail: Composed, messageId?: string): Promise<SendResult> {
  try {
    const sent = await ctx.mailer.send({
      to,
      ...(messageId ? { messageId } : {}),
      subject: mail.subject,
      text: mail.text,
      html: toHtml(mail.text),
      ...(cfg.replyTo ? { replyTo: cfg.replyTo } : {}),
      ...(mail.attachments ? { attachments: mail.attachments } : {}),
    });
    return { outcome: 'delivered', statusCode: 250, remoteRef: sent.messageId, ...(mail.note ? { note: mail.note } : {}) };
  } catch (err) {
    return mailFailure(err);
  }
}

export const emailSender: ChannelSender = {
  kind: 'email',
  targets(config): ChannelTarget[] {
    const cfg = channelConfig('email', config);
    return [...cfg.to, ...(cfg.cc ?? []), ...(cfg.bcc ?? [])].map((address) => ({ key: address.toLowerCase(), masked: address }));
  },
  async send(ctx, target, message) {
    const cfg = channelConfig('email', ctx.config);
    // One delivery per recipient: its id makes a Message-ID that every attempt repeats (at least once, recognisably).
    return sendOne(ctx, target.masked, cfg, await compose(cfg, message), `<${message.deliveryId}@formwork.reports>`);
  },
  async test(ctx) {
    // Only the caller is mailed (docs/security.md "Reporting channels: verified senders, budgets,
    // header secrets"): a test must not be a way to mail the channel's recipients at will.
    if (!ctx.testRecipient) return { ok: false, error: 'No address to send the test message to' };
    const cfg = channelConfig('email', ctx.config);
    const targets = emailSender.targets(ctx.config);
    const mail = {
      subject: `Formwork test message (${ctx.channelShortId})`,
      text: `This is a test message of the Formwork report channel ${ctx.channelShortId}. It goes to you only; deliveries go to its ${targets.length} recipient(s).`,
    };
    const r = await sendOne(ctx, ctx.testRecipient, { ...cfg, replyTo: undefined }, mail);
    // lastTest is read by viewers and keys: the caller's address is not kept in it.
    const details = { recipients: targets.length, sentToCaller: true };
    return r.outcome === 'delivered' ? { ok: true, details } : { ok: false, error: r.error ?? 'The test message was not sent', details };
  },
};
