import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createOutboundGuard } from '../../../adapters/http/outbound';
import { OutboxMailer, SmtpMailer } from '../../../adapters/mail';
import type { ChannelContext, DeliveryFile, DeliveryMessage } from '../../../adapters/channels/channel-sender';
import { CHANNEL_SENDERS } from '../../../adapters/channels';
import { checkChannelSettings } from '../../../domain/reporting/channel-config';
import type { ChannelKind } from '../../../domain/reporting/channel-kinds';
import { verifyWebhookSignature } from '../../../domain/signing';
import { freePort } from '../../../scripts/free-port';
import { startSmtpServer, type SmtpTestServer } from '../../support/smtp-server';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * The e-mail, Slack, Teams and webhook senders (adapters/channels; docs/reporting.md "Channels") against a
 * real SMTP server and local HTTP receivers: what arrives, and what each answer means for the
 * delivery (delivered, retry, permanent).
 */
describe('report channel senders', () => {
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let mailer: SmtpMailer;
  const guard = createOutboundGuard(['127.0.0.1'], { maxRedirects: 0 });

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpServer(), startWebhookReceiver()]);
    mailer = new SmtpMailer({ url: smtp.url, from: 'Formwork <reports@formwork.test>' });
  });

  afterAll(async () => {
    await mailer?.close();
    await Promise.all([smtp?.stop(), receiver?.stop()]);
  });

  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respondWith([], 200);
  });

  const sender = (kind: ChannelKind) => CHANNEL_SENDERS[kind]!;

  /** A stored config: what the API would have saved (defaults applied). */
  function ctx(kind: ChannelKind, config: Record<string, unknown>, secrets: Record<string, string> = {}, overrides: Partial<ChannelContext> = {}): ChannelContext {
    const checked = checkChannelSettings(kind, config, {});
    expect(checked.issues).toEqual([]);
    return { channelId: randomUUID(), projectId: randomUUID(), config: checked.config, secrets, guard, mailer, ...overrides };
  }

  function file(filename: string, content: Buffer, format: DeliveryFile['format'] = 'csv'): DeliveryFile {
    return {
      filename,
      format,
      contentType: format === 'pdf' ? 'application/pdf' : format === 'excel' ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' : 'text/csv',
      bytes: content.length,
      open: async () => Readable.from([content]),
      url: `https://files.formwork.test/${filename}?sig=abc`,
      expiresAt: '2026-11-30T00:00:00.000Z',
      reportName: 'Sales',
    };
  }

  function message(files: DeliveryFile[] = [], report: Partial<DeliveryMessage['report']> = {}): DeliveryMessage {
    return {
      event: 'report.run.completed',
      eventId: randomUUID(),
      deliveryId: randomUUID(),
      projectId: randomUUID(),
      report: { id: randomUUID(), name: 'Sales', slug: 'sales', ...report },
      run: {
        id: randomUUID(),
        shortId: 'rrun_abcdefghijklmnop',
        status: 'delivering',
        trigger: 'schedule',
        // 23:30 UTC is already the next day in Berlin: the date placeholder follows the run's zone.
        scheduledFor: '2026-11-22T23:30:00.000Z',
        timezone: 'Europe/Berlin',
        parameters: { region: 'EU' },
      },
      files,
      runUrl: 'https://formwork.test/api/reporting/runs/x',
    };
  }

  describe('email', () => {
    const address = () => `r-${randomBytes(4).toString('hex')}@example.com`;

    it('sends one message per recipient; a 4xx refusal retries that recipient only, a 5xx is final', async () => {
      const [a, b, c] = [address(), address(), address()];
      const channel = ctx('email', { to: [a], cc: [b], bcc: [c] });
      const targets = sender('email').targets(channel.config);
      expect(targets).toEqual([
        { key: a, masked: a },
        { key: b, masked: b },
        { key: c, masked: c },
      ]);
      smtp.refuseRecipient(b, 450);
      smtp.refuseRecipient(c, 550);
      const msg = message();
      const results = await Promise.all(targets.map((t) => sender('email').send(channel, t, msg)));
      expect(results[0]).toMatchObject({ outcome: 'delivered', statusCode: 250, remoteRef: expect.stringMatching(/^<.+>$/) });
      expect(results[1]).toMatchObject({ outcome: 'retry', statusCode: 450, error: 'Mail server deferred the message (450)' });
      expect(results[2]).toMatchObject({ outcome: 'permanent', statusCode: 550, error: 'Mail server refused the message (550)' });
      // The refusal's own text never becomes the error.
      expect(JSON.stringify(results)).not.toMatch(/Mailbox busy|No such mailbox/);

      const mail = await smtp.waitForMessage((m) => m.envelopeTo.includes(a));
      // Each recipient gets a message of their own: nobody sees the others' addresses.
      expect(mail.envelopeTo).toEqual([a]);
      expect(mail.to).toEqual([a]);
      expect(mail.raw.toString()).not.toContain(b);
      expect(mail.subject).toBe('Sales — 2026-11-23');

      // Once the mailbox accepts again, the retried recipient gets it.
      smtp.refuseRecipient(b, null);
      expect(await sender('email').send(channel, targets[1], msg)).toMatchObject({ outcome: 'delivered' });
    });

    it('attaches the files while they fit, with placeholders filled in subject and body', async () => {
      const to = address();
      const csv = Buffer.from('region,amount\nEU,10\n');
      const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2000)]);
      const channel = ctx('email', {
        to: [to],
        replyTo: 'team@example.com',
        subject: '{{report.name}} ({{report.slug}}) {{run.shortId}} {{run.status}}',
        body: 'Hello,\n\nrun of {{run.scheduledFor | date}} ({{run.scheduledFor}}).\n{{links}}',
      });
      const result = await sender('email').send(channel, sender('email').targets(channel.config)[0], message([file('sales.csv', csv), file('sales.pdf', pdf, 'pdf')]));
      expect(result).toEqual({ outcome: 'delivered', statusCode: 250, remoteRef: expect.any(String) });
      const mail = await smtp.waitForMessage((m) => m.envelopeTo.includes(to));
      expect(mail.subject).toBe('Sales (sales) rrun_abcdefghijklmnop delivering');
      expect(mail.text).toContain('run of 2026-11-23 (2026-11-22T23:30:00.000Z)');
      expect(mail.text).toContain('sales.csv: https://files.formwork.test/sales.csv?sig=abc');
      expect(mail.raw.toString()).toMatch(/^Reply-To: team@example.com/m);
      expect(mail.attachments.map((x) => [x.filename, x.mimeType])).toEqual([
        ['sales.csv', 'text/csv'],
        ['sales.pdf', 'application/pdf'],
      ]);
      expect(mail.attachments[0].content.equals(csv)).toBe(true);
      expect(mail.attachments[1].content.equals(pdf)).toBe(true);
    });

    it('puts links instead of files past maxAttachmentMb (after base64) and says so; attach: links always links', async () => {
      const to = address();
      // 800 KB is 1.07 MiB in base64: over a 1 MB limit.
      const big = file('big.xlsx', randomBytes(800 * 1024), 'excel');
      const channel = ctx('email', { to: [to], maxAttachmentMb: 1, body: 'No links placeholder here.' });
      const result = await sender('email').send(channel, { key: to, masked: to }, message([big]));
      expect(result).toMatchObject({ outcome: 'delivered', note: 'attachment_replaced_by_link' });
      const mail = await smtp.waitForMessage((m) => m.envelopeTo.includes(to));
      expect(mail.attachments).toEqual([]);
      // The body named no {{links}}: the links are added so the files stay reachable.
      expect(mail.text).toContain('No links placeholder here.');
      expect(mail.text).toContain('big.xlsx: https://files.formwork.test/big.xlsx?sig=abc');

      const linksTo = address();
      const links = ctx('email', { to: [linksTo], attach: 'links' });
      const linked = await sender('email').send(links, { key: linksTo, masked: linksTo }, message([file('small.csv', Buffer.from('a\n1\n'))]));
      expect(linked.note).toBeUndefined();
      const linkedMail = await smtp.waitForMessage((m) => m.envelopeTo.includes(linksTo));
      expect(linkedMail.attachments).toEqual([]);
      expect(linkedMail.text).toContain('small.csv: https://files.formwork.test/small.csv?sig=abc');
    });

    it('keeps the subject on one line whatever the report name holds (no header injection)', async () => {
      const to = address();
      const channel = ctx('email', { to: [to] });
      const result = await sender('email').send(channel, { key: to, masked: to }, message([], { name: 'Sales\r\nBcc: victim@example.com\r\n' }));
      expect(result.outcome).toBe('delivered');
      const mail = await smtp.waitForMessage((m) => m.envelopeTo.includes(to));
      expect(mail.envelopeTo).toEqual([to]);
      const head = mail.raw.toString().split('\r\n\r\n')[0];
      expect(head).not.toMatch(/^Bcc:/im);
      expect(mail.subject).toBe('Sales Bcc: victim@example.com  — 2026-11-23');
    });

    it('retries when the mail server cannot be reached', async () => {
      const down = new SmtpMailer({ url: `smtp://127.0.0.1:${await freePort()}`, from: 'reports@formwork.test' });
      const to = address();
      const result = await sender('email').send(ctx('email', { to: [to] }, {}, { mailer: down }), { key: to, masked: to }, message());
      expect(result).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/^Mail server not reachable/) });
      await down.close();
    });

    it('through the outbox mailer (no SMTP_URL): the outbox records attachment names and sizes, not their bytes', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'formwork-outbox-'));
      try {
        const outbox = new OutboxMailer({ dir, from: 'reports@formwork.test', log: { info: () => undefined } });
        const to = address();
        const csv = Buffer.from('a,b\n1,2\n');
        const result = await sender('email').send(ctx('email', { to: [to], replyTo: 'team@example.com' }, {}, { mailer: outbox }), { key: to, masked: to }, message([file('sales.csv', csv)]));
        expect(result).toMatchObject({ outcome: 'delivered', statusCode: 250 });
        const [name] = await readdir(dir);
        const stored = JSON.parse(await readFile(join(dir, name), 'utf8'));
        expect(stored).toMatchObject({ to, subject: 'Sales — 2026-11-23', replyTo: 'team@example.com', attachments: [{ filename: 'sales.csv', contentType: 'text/csv', bytes: csv.length }] });
        expect(JSON.stringify(stored)).not.toContain(csv.toString('base64'));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('test() sends a short message to the caller only, never to the recipients', async () => {
      const [a, b, caller] = [address(), address(), address()];
      const result = await sender('email').test({ ...ctx('email', { to: [a], bcc: [b] }), channelShortId: 'rch_test', testRecipient: caller });
      expect(result).toEqual({ ok: true, details: { recipients: 2, sentToCaller: true } });
      const mail = await smtp.waitForMessage((m) => m.envelopeTo.includes(caller));
      expect(mail.subject).toBe('Formwork test message (rch_test)');
      expect(mail.envelopeTo).toEqual([caller]);
      expect(smtp.messages.filter((m) => m.envelopeTo.includes(a) || m.envelopeTo.includes(b))).toEqual([]);
      // Without a caller's address nothing is sent.
      expect(await sender('email').test({ ...ctx('email', { to: [a] }), channelShortId: 'rch_test' })).toEqual({ ok: false, error: 'No address to send the test message to' });
    });
  });

  describe('slack and teams', () => {
    const hook = () => `${receiver.url}/hooks/${randomBytes(4).toString('hex')}`;

    it('posts Slack text and blocks with links to the files', async () => {
      const url = hook();
      const channel = ctx('slack', { text: 'New *{{report.name}}* for {{run.scheduledFor | date}}' }, { webhookUrl: url });
      const result = await sender('slack').send(channel, sender('slack').targets(channel.config)[0], message([file('sales.csv', Buffer.from('x'))], { name: 'Sales <b>&</b>' }));
      expect(result).toEqual({ outcome: 'delivered', statusCode: 200 });
      const [req] = await receiver.waitForRequests(1);
      expect(req.path).toBe(new URL(url).pathname);
      expect(req.headers['content-type']).toBe('application/json');
      // Values are escaped: a report name cannot open a Slack link or mention.
      expect(req.json.text).toBe('New *Sales &lt;b&gt;&amp;&lt;/b&gt;* for 2026-11-23');
      expect(req.json.blocks).toEqual([
        { type: 'section', text: { type: 'mrkdwn', text: req.json.text } },
        { type: 'section', text: { type: 'mrkdwn', text: '• <https://files.formwork.test/sales.csv?sig=abc|sales.csv>' } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'Run rrun_abcdefghijklmnop · delivering' }] },
      ]);
    });

    it('maps answers: 500 retry, 429 retry after Retry-After, 404 and 302 final; never the remote body', async () => {
      const channel = ctx('slack', {}, { webhookUrl: hook() });
      const target = { key: 'default', masked: 'Slack webhook' };
      receiver.respondWith([
        { status: 500, body: 'remote-secret-body' },
        { status: 429, body: 'slow down', headers: { 'retry-after': '7' } },
        { status: 404, body: 'no_service' },
        { status: 302, headers: { location: `${receiver.url}/moved` } },
      ]);
      const results = [];
      for (let i = 0; i < 4; i += 1) results.push(await sender('slack').send(channel, target, message()));
      expect(results).toEqual([
        { outcome: 'retry', statusCode: 500, error: 'Slack answered 500' },
        { outcome: 'retry', statusCode: 429, error: 'Slack answered 429', retryAfterMs: 7000 },
        { outcome: 'permanent', statusCode: 404, error: 'Slack answered 404' },
        { outcome: 'permanent', statusCode: 302, error: 'Slack answered 302: redirects are not followed, use the final URL' },
      ]);
      // The redirect was not followed.
      expect(receiver.requests.map((r) => r.path).filter((p) => p === '/moved')).toEqual([]);
      expect(receiver.requests).toHaveLength(4);
    });

    it('retries a network error', async () => {
      const closed = `http://127.0.0.1:${await freePort()}/hook`;
      const result = await sender('slack').send(ctx('slack', {}, { webhookUrl: closed }), { key: 'default', masked: 'x' }, message());
      expect(result).toEqual({ outcome: 'retry', error: expect.stringMatching(/^Network error/) });
    });

    it('posts a Teams Adaptive Card 1.4 with a button per file; same outcome rules', async () => {
      const channel = ctx('teams', { title: '{{report.name}} is ready', text: 'Run of {{run.scheduledFor | date}}' }, { webhookUrl: hook() });
      const target = sender('teams').targets(channel.config)[0];
      const result = await sender('teams').send(channel, target, message([file('sales.pdf', Buffer.from('%PDF'), 'pdf')]));
      expect(result).toEqual({ outcome: 'delivered', statusCode: 200 });
      const [req] = await receiver.waitForRequests(1);
      expect(req.json).toEqual({
        type: 'message',
        attachments: [
          {
            contentType: 'application/vnd.microsoft.card.adaptive',
            contentUrl: null,
            content: {
              $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
              type: 'AdaptiveCard',
              version: '1.4',
              body: [
                { type: 'TextBlock', text: 'Sales is ready', weight: 'Bolder', size: 'Medium', wrap: true },
                { type: 'TextBlock', text: 'Run of 2026-11-23', wrap: true },
                {
                  type: 'FactSet',
                  facts: [
                    { title: 'Status', value: 'delivering' },
                    { title: 'Scheduled for', value: '2026-11-23' },
                    { title: 'Run', value: 'rrun_abcdefghijklmnop' },
                  ],
                },
              ],
              actions: [{ type: 'Action.OpenUrl', title: 'Download sales.pdf', url: 'https://files.formwork.test/sales.pdf?sig=abc' }],
            },
          },
        ],
      });
      receiver.respondWith([503, { status: 301, headers: { location: '/x' } }]);
      expect(await sender('teams').send(channel, target, message())).toMatchObject({ outcome: 'retry', statusCode: 503 });
      expect(await sender('teams').send(channel, target, message())).toMatchObject({ outcome: 'permanent', statusCode: 301 });
    });

    it('refuses loopback and metadata targets without OUTBOUND_ALLOWLIST: nothing is sent', async () => {
      const closedGuard = createOutboundGuard([], { maxRedirects: 0 });
      for (const url of [hook(), 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/x']) {
        for (const kind of ['slack', 'teams'] as const) {
          const result = await sender(kind).send(ctx(kind, {}, { webhookUrl: url }, { guard: closedGuard }), { key: 'default', masked: 'x' }, message());
          expect(result).toEqual({ outcome: 'permanent', error: 'Target refused by the outbound guard (internal_address)' });
        }
      }
      const test = await sender('slack').test({ ...ctx('slack', {}, { webhookUrl: hook() }, { guard: closedGuard }), channelShortId: 'rch_x' });
      expect(test).toEqual({ ok: false, error: 'Target refused by the outbound guard (internal_address)' });
      expect(receiver.requests).toEqual([]);
    });
  });

  describe('webhook', () => {
    const secret = `whsec_${randomBytes(16).toString('hex')}`;

    it('posts the signed envelope with the document webhooks’ headers and the channel’s own', async () => {
      const channel = ctx('webhook', { url: `${receiver.url}/erp/reports`, headers: { 'X-Tenant': 'acme' } }, { secret });
      expect(sender('webhook').targets(channel.config)).toEqual([{ key: 'default', masked: `127.0.0.1:${receiver.port}` }]);
      const msg = message([file('sales.csv', Buffer.from('a,b\n'))]);
      const result = await sender('webhook').send(channel, { key: 'default', masked: 'x' }, msg);
      expect(result).toEqual({ outcome: 'delivered', statusCode: 200 });
      const [req] = await receiver.waitForRequests(1);
      expect(req.path).toBe('/erp/reports');
      expect(req.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': 'Formwork-Reports/1.0',
        'x-tenant': 'acme',
        'x-service-event-id': msg.eventId,
        'x-service-event-type': 'report.run.completed',
      });
      expect(verifyWebhookSignature(secret, req.headers['x-service-timestamp'], req.rawBody, req.headers['x-service-signature'])).toBe(true);
      expect(Object.keys(req.json)).toEqual(['id', 'type', 'timestamp', 'data']);
      expect(req.json).toMatchObject({
        id: msg.eventId,
        type: 'report.run.completed',
        data: {
          run: { id: msg.run.id, shortId: msg.run.shortId, status: 'delivering', trigger: 'schedule', scheduledFor: msg.run.scheduledFor, timezone: 'Europe/Berlin', parameters: { region: 'EU' } },
          report: msg.report,
          files: [{ filename: 'sales.csv', format: 'csv', bytes: 4, url: 'https://files.formwork.test/sales.csv?sig=abc', expiresAt: '2026-11-30T00:00:00.000Z' }],
        },
      });
    });

    it('maps answers like the chat kinds and keeps the remote body out of the error', async () => {
      const channel = ctx('webhook', { url: `${receiver.url}/hook` }, { secret });
      const target = { key: 'default', masked: 'x' };
      receiver.respondWith([
        { status: 500, body: 'stack trace with secrets' },
        410,
        { status: 307, headers: { location: `${receiver.url}/elsewhere` } },
        { status: 429, body: 'slow down', headers: { 'retry-after': '90' } },
      ]);
      expect(await sender('webhook').send(channel, target, message())).toEqual({ outcome: 'retry', statusCode: 500, error: 'Receiver answered 500' });
      expect(await sender('webhook').send(channel, target, message())).toEqual({ outcome: 'permanent', statusCode: 410, error: 'Receiver answered 410' });
      expect(await sender('webhook').send(channel, target, message())).toMatchObject({ outcome: 'permanent', statusCode: 307 });
      // A 429's Retry-After is honoured like the chat kinds'.
      expect(await sender('webhook').send(channel, target, message())).toEqual({ outcome: 'retry', statusCode: 429, error: 'Receiver answered 429', retryAfterMs: 90_000 });
      expect(receiver.requests.map((r) => r.path)).toEqual(['/hook', '/hook', '/hook', '/hook']);
    });

    it('test() sends a signed report.test event', async () => {
      const channel = ctx('webhook', { url: `${receiver.url}/hook` }, { secret });
      expect(await sender('webhook').test({ ...channel, channelShortId: 'rch_hook' })).toEqual({ ok: true, details: { statusCode: 200 } });
      const [req] = await receiver.waitForRequests(1);
      expect(req.headers['x-service-event-type']).toBe('report.test');
      expect(req.json).toMatchObject({ type: 'report.test', data: { channelShortId: 'rch_hook' } });
      expect(verifyWebhookSignature(secret, req.headers['x-service-timestamp'], req.rawBody, req.headers['x-service-signature'])).toBe(true);
    });

    it('refuses an internal target without OUTBOUND_ALLOWLIST', async () => {
      const channel = ctx('webhook', { url: 'http://169.254.169.254/hook' }, { secret }, { guard: createOutboundGuard([]) });
      const result = await sender('webhook').send(channel, { key: 'default', masked: 'x' }, message());
      expect(result.outcome).toBe('permanent');
      expect(result.error).toMatch(/private or internal address/);
    });
  });
});
