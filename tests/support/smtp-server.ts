import type { AddressInfo } from 'node:net';
import { buffer as readAll } from 'node:stream/consumers';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';

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
  raw: Buffer;
}

export interface SmtpTestServer {
  url: string;
  messages: ParsedMail[];
  /** Resolves with the first message, received earlier or later, that satisfies `predicate`. */
  waitForMessage(predicate?: (mail: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  stop(): Promise<void>;
}

function mailboxes(list: PostalMime.Address[] | undefined): string[] {
  return (list ?? []).flatMap((a) => (a.group ? a.group.map((m) => m.address) : [a.address]));
}

/** A real SMTP server on a free 127.0.0.1 port, plain text, accepting any (or no) login. */
export async function startSmtpServer(): Promise<SmtpTestServer> {
  const messages: ParsedMail[] = [];
  const waiters = new Set<(mail: ParsedMail) => void>();

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' });
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
    waitForMessage(predicate = () => true, timeoutMs = 10_000) {
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
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
