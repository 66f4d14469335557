import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailer, OutboxMailer, SmtpMailer, type MailMessage, type OutboxMessage } from '../../../adapters/mail';
import { loadConfig } from '../../../domain/config';
import { freePort } from '../../../scripts/free-port';
import { startSmtpServer, type SmtpTestServer } from '../../support/smtp-server';

const message = (subject: string): MailMessage => ({
  to: 'approver@example.com',
  subject,
  text: `Bitte prüfen: https://formwork.example.com/review?token=abc123\nDanke.`,
  html: '<p>Bitte <a href="https://formwork.example.com/review?token=abc123">prüfen</a></p>',
});

describe('SmtpMailer', () => {
  let smtp: SmtpTestServer;
  const mailers: SmtpMailer[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
  });

  afterAll(async () => {
    for (const m of mailers) await m.close();
    await smtp.stop();
  });

  function mailerFor(url: string): SmtpMailer {
    const config = loadConfig({ SMTP_URL: url, MAIL_FROM: 'Formwork <no-reply@formwork.test>' });
    const mailer = createMailer(config);
    expect(mailer).toBeInstanceOf(SmtpMailer);
    mailers.push(mailer as SmtpMailer);
    return mailer as SmtpMailer;
  }

  it('delivers subject, text and html to a real SMTP server', async () => {
    const mailer = mailerFor(smtp.url);
    await expect(mailer.check()).resolves.toBeUndefined();
    const { messageId } = await mailer.send(message('Freigabe erforderlich – Rechnung 42'));
    expect(messageId).toMatch(/^<.+@.+>$/);

    const mail = await smtp.waitForMessage((m) => m.messageId === messageId, 10_000);
    expect(mail.from).toBe('no-reply@formwork.test');
    expect(mail.to).toEqual(['approver@example.com']);
    expect(mail.envelopeTo).toEqual(['approver@example.com']);
    expect(mail.authUser).toBeUndefined();
    expect(mail.subject).toBe('Freigabe erforderlich – Rechnung 42');
    expect(mail.text.trim()).toBe(message('').text);
    expect(mail.html).toContain('<a href="https://formwork.example.com/review?token=abc123">prüfen</a>');
  });

  it('logs in when the URL carries credentials', async () => {
    const url = new URL(smtp.url);
    url.username = 'relay-user';
    url.password = 'relay-pass';
    const { messageId } = await mailerFor(url.toString()).send(message('with auth'));
    const mail = await smtp.waitForMessage((m) => m.messageId === messageId, 10_000);
    expect(mail.subject).toBe('with auth');
    expect(mail.authUser).toBe('relay-user');
  });

  it('fails its health check when no server listens', async () => {
    const mailer = mailerFor(`smtp://127.0.0.1:${await freePort()}`);
    await expect(mailer.check()).rejects.toThrow(/ECONNREFUSED|connect/i);
  });
});

describe('OutboxMailer', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'formwork-outbox-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes each message to DATA_DIR/outbox and logs recipient, subject and links', async () => {
    const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
    const config = loadConfig({ DATA_DIR: dataDir });
    const mailer = createMailer(config, { log: { info: (msg, fields) => lines.push({ msg, fields }) } });
    expect(mailer).toBeInstanceOf(OutboxMailer);
    await expect(mailer.check()).resolves.toBeUndefined();

    const first = await mailer.send(message('first'));
    const second = await mailer.send({ ...message('second'), text: 'no links here' });
    expect(first.messageId).not.toBe(second.messageId);

    const files = (await readdir(join(dataDir, 'outbox'))).sort();
    expect(files).toHaveLength(2);
    for (const f of files) expect(f).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[0-9a-f-]{36}\.json$/);

    const stored = JSON.parse(await readFile(join(dataDir, 'outbox', files[0]), 'utf8')) as OutboxMessage;
    expect(stored).toMatchObject({ ...message('first'), messageId: first.messageId, from: config.mail.from });

    expect(lines).toHaveLength(2);
    expect(lines[0].fields).toMatchObject({
      to: 'approver@example.com',
      subject: 'first',
      links: ['https://formwork.example.com/review?token=abc123'],
    });
    expect(lines[1].fields).toMatchObject({ subject: 'second', links: [] });
  });
});
