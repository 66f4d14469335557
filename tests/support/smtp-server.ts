import type { AddressInfo } from 'node:net';
import { buffer as readAll } from 'node:stream/consumers';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { WAIT_SLACK } from './wait';

/** A message as the test reads it back: headers decoded, bodies extracted by a real MIME parser. */
export interface ParsedMail {
  from?: string;
  /** Header recipients' addresses. */
  to: string[];
  /** SMTP envelope recipients (RCPT TO). */
  envelopeTo: string[];
  subject: string;
  text: string;
  html: string;
  messageId?: string;
  /** The user the client logged in as, when it did. */
  authUser?: string;
  /** Attached files as postal-mime read them. */
  attachments: Array<{ filename: string | null; mimeType: string; content: Buffer }>;
  raw: Buffer;
}

export interface SmtpTestServer {
  url: string;
  messages: ParsedMail[];
  /** Resolves with the first message, received earlier or later, that satisfies `predicate`. */
  waitForMessage(predicate?: (mail: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  /** RCPT TO `address` (case-insensitive) is answered with `code` (e.g. 450, 550) from now on; null accepts it again. */
  refuseRecipient(address: string, code: number | null): void;
  /** How many times RCPT TO `address` was refused so far. */
  refusals(address: string): number;
  stop(): Promise<void>;
}

function mailboxes(list: PostalMime.Address[] | undefined): string[] {
  return (list ?? []).flatMap((a) => (a.group ? a.group.map((m) => m.address) : [a.address]));
}

/** A real SMTP server on a free 127.0.0.1 port, plain text, accepting any (or no) login. */
export async function startSmtpServer(): Promise<SmtpTestServer> {
  const messages: ParsedMail[] = [];
  const waiters = new Set<(mail: ParsedMail) => void>();
  const refused = new Map<string, number>();
  const refusedCount = new Map<string, number>();

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' });
    },
    onRcptTo(address, _session, callback) {
      const code = refused.get(address.address.toLowerCase());
      if (code === undefined) return callback();
      refusedCount.set(address.address.toLowerCase(), (refusedCount.get(address.address.toLowerCase()) ?? 0) + 1);
      const err = Object.assign(new Error(code < 500 ? 'Mailbox busy, try later' : 'No such mailbox'), { responseCode: code });
      callback(err);
    },
    onData(stream, session, callback) {
      readAll(stream)
        .then(async (raw) => {
          const email = await PostalMime.parse(raw);
          const mail: ParsedMail = {
            from: email.from && !email.from.group ? email.from.address : undefined,
            to: mailboxes(email.to),
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            subject: email.subject ?? '',
            text: email.text ?? '',
            html: email.html ?? '',
            messageId: email.messageId,
            authUser: typeof session.user === 'string' ? session.user : undefined,
            attachments: email.attachments.map((a) => ({
              filename: a.filename,
              mimeType: a.mimeType,
              content: typeof a.content === 'string' ? Buffer.from(a.content) : Buffer.from(new Uint8Array(a.content as ArrayBuffer)),
            })),
            raw,
          };
          messages.push(mail);
          for (const notify of [...waiters]) notify(mail);
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    // The time a mail needs on a quiet machine, with a margin, times WAIT_SLACK (tests/support/wait.ts).
    waitForMessage(predicate = () => true, timeoutMs = 30_000) {
      timeoutMs *= WAIT_SLACK;
      const seen = messages.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise<ParsedMail>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`No matching mail within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        const waiter = (mail: ParsedMail) => {
          if (!predicate(mail)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(mail);
        };
        waiters.add(waiter);
      });
    },
    refusals: (address) => refusedCount.get(address.toLowerCase()) ?? 0,
    refuseRecipient(address, code) {
      if (code === null) refused.delete(address.toLowerCase());
      else refused.set(address.toLowerCase(), code);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
