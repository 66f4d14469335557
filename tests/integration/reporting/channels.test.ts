import { randomBytes, randomUUID } from 'node:crypto';
import { verifyWebhookSignature } from '../../../domain/signing';
import { startTestApp, type TestApp } from '../../support/app';
import { addTeamProject, createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { inTeam } from '../../support/teams';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/** Channels under /api/reporting/channels (docs/reporting.md "Channels"). */
describe('reporting channels', () => {
  let app: TestApp;
  let closed: TestApp;
  let receiver: WebhookReceiver;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let viewer: SignedUpUser;
  let teamId: string;
  const suffix = randomBytes(3).toString('hex');
  const LIMIT = 25;

  beforeAll(async () => {
    [app, closed, receiver] = await Promise.all([
      startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', REPORTING_CHANNELS_PER_PROJECT: String(LIMIT) } }),
      startTestApp({ worker: false }),
      startWebhookReceiver(),
    ]);
    [owner, admin, member, viewer] = await Promise.all([1, 2, 3, 4].map(() => signUp(app, { verified: true })));
    teamId = await addTeamProject(app.services.db, owner.id, [
      { userId: admin.id, role: 'admin' },
      { userId: member.id, role: 'member' },
      { userId: viewer.id, role: 'viewer' },
    ]);
  });

  afterAll(async () => {
    await Promise.all([app?.close(), closed?.close(), receiver?.stop()]);
  });

  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respondWith([], 200);
  });

  const mailbox = () => `r-${randomBytes(4).toString('hex')}@example.com`;
  const hook = () => `${receiver.url}/hooks/${randomBytes(6).toString('hex')}`;
  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;
  const bodies = {
    email: (over: Record<string, unknown> = {}) => ({ name: name('Mail'), kind: 'email', config: { to: [mailbox()] }, ...over }),
    slack: (url = hook()) => ({ name: name('Slack'), kind: 'slack', config: { text: 'Report {{report.name}}' }, secrets: { webhookUrl: url } }),
    teams: (url = hook()) => ({ name: name('Teams'), kind: 'teams', config: { title: '{{report.name}}' }, secrets: { webhookUrl: url } }),
    webhook: (url = `${receiver.url}/erp`) => ({ name: name('Hook'), kind: 'webhook', config: { url, headers: { 'X-Tenant': 'acme' } } }),
  };

  const as = (user: SignedUpUser) => ({ token: user.accessToken, headers: inTeam(teamId) });

  async function create(body: Record<string, unknown>, user = owner, target = app) {
    const res = await target.request('POST', '/api/reporting/channels', { ...as(user), body });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
    return res.body;
  }

  it('creates an e-mail channel with defaults, reads it by id and short id, lists, patches and deletes it', async () => {
    const to = mailbox();
    const res = await app.request('POST', '/api/reporting/channels', { ...as(member), body: { name: `Finance ${suffix}`, kind: 'email', config: { to: [to.toUpperCase()], cc: [mailbox()] } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      shortId: expect.stringMatching(/^rch_[A-Za-z0-9]{16}$/),
      name: `Finance ${suffix}`,
      kind: 'email',
      config: { to: [to], cc: [expect.any(String)], subject: '{{report.name}} — {{run.scheduledFor | date}}', attach: 'files', maxAttachmentMb: 10 },
      secrets: {},
      isActive: true,
      lastTest: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const ch = res.body;
    const byShort = await app.request('GET', `/api/reporting/channels/${ch.shortId}`, as(viewer));
    expect([byShort.status, byShort.body.id]).toEqual([200, ch.id]);

    const list = await app.request('GET', `/api/reporting/channels?kind=email&search=finance%20${suffix}`, as(viewer));
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: any) => c.id)).toEqual([ch.id]);
    expect(list.body.meta).toEqual({ total: 1, page: 1, limit: 20, totalPages: 1, hasNextPage: false, hasPreviousPage: false });

    const patched = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(member), body: { isActive: false, config: { to: [to], attach: 'links' } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ isActive: false, config: { to: [to], attach: 'links', maxAttachmentMb: 10 } });
    expect(patched.body.config.cc).toBeUndefined();
    const inactive = await app.request('GET', `/api/reporting/channels?isActive=false&search=finance%20${suffix}`, as(viewer));
    expect(inactive.body.data.map((c: any) => c.id)).toEqual([ch.id]);

    const del = await app.request('DELETE', `/api/reporting/channels/${ch.shortId}`, as(member));
    expect(del.status).toBe(204);
    const gone = await app.request('GET', `/api/reporting/channels/${ch.id}`, as(viewer));
    expect([gone.status, gone.body.code]).toEqual([404, 'ERR_CHAN_001']);
  });

  it('lets members manage e-mail channels only, admins every kind, viewers and read_reports keys read, and keeps projects apart', async () => {
    const slackByMember = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.slack() });
    expect([slackByMember.status, slackByMember.body.code, slackByMember.body.relatedInfo]).toEqual([403, 'ERR_AUTH_005', { required: 'admin', granted: 'member' }]);
    const slack = await create(bodies.slack(), admin);
    const mail = await create(bodies.email(), member);
    for (const [method, path, body] of [
      ['PATCH', `/api/reporting/channels/${slack.id}`, { isActive: false }],
      ['DELETE', `/api/reporting/channels/${slack.id}`, undefined],
      ['POST', `/api/reporting/channels/${slack.id}/test`, {}],
    ] as const) {
      const res = await app.request(method, path, { ...as(member), body });
      expect([method, res.status, res.body.code]).toEqual([method, 403, 'ERR_AUTH_005']);
    }
    const viewerCreate = await app.request('POST', '/api/reporting/channels', { ...as(viewer), body: bodies.email() });
    expect([viewerCreate.status, viewerCreate.body.code]).toEqual([403, 'ERR_AUTH_005']);
    const viewerPatch = await app.request('PATCH', `/api/reporting/channels/${mail.id}`, { ...as(viewer), body: { isActive: false } });
    expect(viewerPatch.status).toBe(403);
    const viewerRead = await app.request('GET', `/api/reporting/channels/${slack.id}`, as(viewer));
    expect(viewerRead.status).toBe(200);

    // API keys: read_reports reads; no key manages channels.
    const reader = await createKey(app, owner.accessToken, { name: `reader ${suffix}`, permissions: { read_reports: true } }, teamId);
    const list = await app.request('GET', '/api/reporting/channels', { token: reader.plainKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: any) => c.id)).toEqual(expect.arrayContaining([slack.id, mail.id]));
    expect((await app.request('GET', `/api/reporting/channels/${mail.shortId}`, { token: reader.plainKey })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/api/reporting/channels', bodies.email()],
      ['PATCH', `/api/reporting/channels/${mail.id}`, { isActive: false }],
      ['DELETE', `/api/reporting/channels/${mail.id}`, undefined],
      ['POST', `/api/reporting/channels/${mail.id}/test`, {}],
    ] as const) {
      const res = await app.request(method, path, { token: reader.plainKey, body });
      expect([method, res.status, res.body.code, res.body.relatedInfo?.required]).toEqual([method, 403, 'ERR_AUTH_005', 'manage_channels']);
    }
    const plainKey = await createKey(app, owner.accessToken, { name: `plain ${suffix}` }, teamId);
    const denied = await app.request('GET', '/api/reporting/channels', { token: plainKey.plainKey });
    expect([denied.status, denied.body.code]).toEqual([403, 'ERR_AUTH_005']);

    // Another project (the owner's personal one) sees none of the team's channels.
    const foreign = await app.request('GET', `/api/reporting/channels/${slack.id}`, { token: owner.accessToken });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'ERR_CHAN_001']);
    const foreignDelete = await app.request('DELETE', `/api/reporting/channels/${mail.id}`, { token: owner.accessToken });
    expect(foreignDelete.status).toBe(404);
  });

  it('keeps secrets write-only and encrypted at rest; PATCH null clears one; a webhook secret is shown once', async () => {
    const url = hook();
    const slack = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: bodies.slack(url) });
    expect(slack.status).toBe(201);
    expect(slack.text).not.toContain(url);
    expect(slack.body.secrets).toEqual({ webhookUrl: { set: true, updatedAt: expect.any(String) } });
    const [row] = await app.services.db.query(`SELECT secrets FROM reporting_channels WHERE id = $1`, [slack.body.id]);
    expect(row.secrets.webhookUrl.value).toMatch(/^enc:v1:/);
    expect(JSON.stringify(row.secrets)).not.toContain(url);

    const hookCh = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: bodies.webhook() });
    expect(hookCh.status).toBe(201);
    expect(hookCh.body.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    expect(hookCh.body.secrets).toEqual({ secret: { set: true, updatedAt: expect.any(String) } });
    const [hookRow] = await app.services.db.query(`SELECT secrets FROM reporting_channels WHERE id = $1`, [hookCh.body.id]);
    expect(hookRow.secrets.secret.value).toMatch(/^enc:v1:/);
    const again = await app.request('GET', `/api/reporting/channels/${hookCh.body.id}`, as(admin));
    expect(again.body.secret).toBeUndefined();
    expect(again.text).not.toContain(hookCh.body.secret);
    const listed = await app.request('GET', '/api/reporting/channels?kind=webhook', as(admin));
    expect(listed.text).not.toContain(hookCh.body.secret);
    // The signing secret is the service's: a body cannot set it.
    const setSecret = await app.request('PATCH', `/api/reporting/channels/${hookCh.body.id}`, { ...as(admin), body: { secrets: { secret: 'mine' } } });
    expect([setSecret.status, setSecret.body.code]).toEqual([400, 'ERR_CHAN_002']);

    // A webdav password is optional: null clears it, a patch without secrets keeps it.
    const dav = await create({ name: name('Dav'), kind: 'webdav', config: { baseUrl: 'https://dav.example.com/remote.php/dav', directory: 'reports', username: 'u' }, secrets: { password: 'dav-secret-never-shown' } }, admin);
    expect(dav.config).toEqual({ baseUrl: 'https://dav.example.com/remote.php/dav', directory: 'reports', username: 'u', createDirectories: true, conflict: 'unique' });
    const kept = await app.request('PATCH', `/api/reporting/channels/${dav.id}`, { ...as(admin), body: { name: name('Dav renamed') } });
    expect(kept.body.secrets).toEqual({ password: { set: true, updatedAt: dav.secrets.password.updatedAt } });
    const cleared = await app.request('PATCH', `/api/reporting/channels/${dav.id}`, { ...as(admin), body: { secrets: { password: null } } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.secrets).toEqual({});
    // A required secret cannot be cleared.
    const noUrl = await app.request('PATCH', `/api/reporting/channels/${slack.body.id}`, { ...as(admin), body: { secrets: { webhookUrl: null } } });
    expect([noUrl.status, noUrl.body.code, noUrl.body.relatedInfo.errors]).toEqual([400, 'ERR_CHAN_002', [{ path: 'secrets.webhookUrl', message: "'secrets.webhookUrl' is required" }]]);
  });

  it('checks every kind’s config (sftp host key, s3 keys, file-share patterns) naming each problem', async () => {
    const sftp = await create(
      {
        name: name('Sftp'),
        kind: 'sftp',
        config: { host: 'files.example.com', username: 'reports', directory: '/upload', hostKeySha256: `SHA256:${'A'.repeat(43)}`, filenamePattern: '{slug}-{scheduledFor:yyyy-MM-dd}' },
        secrets: { privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n', passphrase: 'pp' },
      },
      admin,
    );
    expect(sftp.config).toMatchObject({ port: 22, conflict: 'unique' });
    expect(sftp.secrets).toEqual({ privateKey: { set: true, updatedAt: expect.any(String) }, passphrase: { set: true, updatedAt: expect.any(String) } });

    const bad = await app.request('POST', '/api/reporting/channels', {
      ...as(admin),
      body: { name: name('Bad'), kind: 'sftp', config: { host: 'files.example.com', username: 'u', directory: '../etc', hostKeySha256: 'md5:ab', filenamePattern: '{nope}', conflict: 'replace' }, secrets: {} },
    });
    expect([bad.status, bad.body.code]).toEqual([400, 'ERR_CHAN_002']);
    expect(bad.body.relatedInfo.errors.map((e: any) => e.path).sort()).toEqual(['config.conflict', 'config.directory', 'config.filenamePattern', 'config.hostKeySha256']);

    const s3 = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: { name: name('S3'), kind: 's3', config: { bucket: 'reports', region: 'eu-west-1' }, secrets: { accessKeyId: 'AKIA' } } });
    expect([s3.status, s3.body.relatedInfo.errors]).toEqual([400, [{ path: 'secrets.secretAccessKey', message: "'secrets.secretAccessKey' is required" }]]);
  });

  it('refuses a second channel with the same name in any case (409 ERR_CHAN_003), also on rename', async () => {
    const first = await create(bodies.email({ name: `Dup ${suffix}` }), member);
    const dup = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ name: `DUP ${suffix}` }) });
    expect([dup.status, dup.body.code]).toEqual([409, 'ERR_CHAN_003']);
    const other = await create(bodies.email(), member);
    const rename = await app.request('PATCH', `/api/reporting/channels/${other.id}`, { ...as(member), body: { name: `dup ${suffix}` } });
    expect([rename.status, rename.body.code]).toEqual([409, 'ERR_CHAN_003']);
    expect(first.id).toBeDefined();
  });

  it('stops at REPORTING_CHANNELS_PER_PROJECT (400 ERR_CHAN_002 with the limit)', async () => {
    const solo = await signUp(app, { verified: true });
    for (let i = 0; i < LIMIT; i += 1) {
      const res = await app.request('POST', '/api/reporting/channels', { token: solo.accessToken, body: bodies.email() });
      expect(res.status).toBe(201);
    }
    const over = await app.request('POST', '/api/reporting/channels', { token: solo.accessToken, body: bodies.email() });
    expect([over.status, over.body.code, over.body.relatedInfo]).toEqual([400, 'ERR_CHAN_002', { limit: LIMIT }]);
  });

  it('refuses to delete a channel a live job uses (409 ERR_CHAN_004)', async () => {
    const ch = await create(bodies.email(), member);
    const jobId = randomUUID();
    await app.services.db.query(
      `INSERT INTO reporting_jobs (id, project_id, short_id, name, items, delivery, channel_ids) VALUES ($1, $2, $3, $4, '[]', 'bundle', $5::jsonb)`,
      [jobId, teamId, `rjob_${randomBytes(8).toString('hex')}`, name('Job'), JSON.stringify([ch.id])],
    );
    const refused = await app.request('DELETE', `/api/reporting/channels/${ch.id}`, as(member));
    expect([refused.status, refused.body.code, refused.body.relatedInfo]).toEqual([409, 'ERR_CHAN_004', { jobs: 1, schedules: 0 }]);
    await app.services.db.query(`UPDATE reporting_jobs SET deleted_at = now() WHERE id = $1`, [jobId]);
    expect((await app.request('DELETE', `/api/reporting/channels/${ch.id}`, as(member))).status).toBe(204);
  });

  describe('POST /channels/:id/test', () => {
    it('e-mails the caller only (never the recipients) and records lastTest', async () => {
      const [a, b] = [mailbox(), mailbox()];
      const ch = await create(bodies.email({ config: { to: [a], bcc: [b] } }), member);
      const res = await app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...as(member), body: {} });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, durationMs: expect.any(Number), details: { recipients: 2, sentToCaller: true } });
      const mail = await app.smtp!.waitForMessage((m) => m.envelopeTo.includes(member.email) && m.subject.includes(ch.shortId));
      expect(mail.subject).toBe(`Formwork test message (${ch.shortId})`);
      expect(mail.envelopeTo).toEqual([member.email]);
      expect(app.smtp!.messages.filter((m) => m.envelopeTo.includes(a) || m.envelopeTo.includes(b))).toEqual([]);
      const read = await app.request('GET', `/api/reporting/channels/${ch.id}`, as(viewer));
      expect(read.body.lastTest).toEqual({ at: expect.any(String), ok: true, durationMs: res.body.durationMs, error: null, details: { recipients: 2, sentToCaller: true } });
    });

    it('posts to Slack and Teams; a failing receiver is ok: false in our words, still 200', async () => {
      const slackUrl = hook();
      const slack = await create(bodies.slack(slackUrl), admin);
      const ok = await app.request('POST', `/api/reporting/channels/${slack.id}/test`, { ...as(admin), body: {} });
      expect(ok.body).toEqual({ ok: true, durationMs: expect.any(Number), details: { statusCode: 200 } });
      const [req] = await receiver.waitForRequests(1);
      expect(req.path).toBe(new URL(slackUrl).pathname);
      expect(req.json).toEqual({ text: `Formwork test message for channel ${slack.shortId}` });

      receiver.respondWith([{ status: 500, body: `leaked ${slackUrl}` }]);
      const failed = await app.request('POST', `/api/reporting/channels/${slack.id}/test`, { ...as(admin), body: {} });
      expect(failed.status).toBe(200);
      expect(failed.body).toEqual({ ok: false, durationMs: expect.any(Number), error: 'Slack answered 500', details: { statusCode: 500 } });
      expect(failed.text).not.toContain(slackUrl);
      const read = await app.request('GET', `/api/reporting/channels/${slack.id}`, as(viewer));
      expect(read.body.lastTest).toMatchObject({ ok: false, error: 'Slack answered 500' });

      receiver.requests.length = 0;
      const teams = await create(bodies.teams(), admin);
      const t = await app.request('POST', `/api/reporting/channels/${teams.shortId}/test`, { ...as(admin), body: {} });
      expect(t.body).toMatchObject({ ok: true });
      const [card] = await receiver.waitForRequests(1);
      expect(card.json).toMatchObject({ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard', version: '1.4' } }] });
    });

    it('sends a signed report.test event to a webhook channel', async () => {
      const created = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: bodies.webhook(`${receiver.url}/erp/reports`) });
      const res = await app.request('POST', `/api/reporting/channels/${created.body.id}/test`, { ...as(admin), body: {} });
      expect(res.body).toEqual({ ok: true, durationMs: expect.any(Number), details: { statusCode: 200 } });
      const [req] = await receiver.waitForRequests(1);
      expect(req.path).toBe('/erp/reports');
      expect(req.headers).toMatchObject({ 'x-service-event-type': 'report.test', 'x-tenant': 'acme', 'user-agent': 'Formwork-Reports/1.0' });
      expect(req.json).toMatchObject({ type: 'report.test', data: { channelId: created.body.id, channelShortId: created.body.shortId } });
      expect(verifyWebhookSignature(created.body.secret, req.headers['x-service-timestamp'], req.rawBody, req.headers['x-service-signature'])).toBe(true);
      const unknownBody = await app.request('POST', `/api/reporting/channels/${created.body.id}/test`, { ...as(admin), body: { wait: 5 } });
      expect([unknownBody.status, unknownBody.body.code]).toEqual([400, 'ERR_VALID_001']);
    });
  });

  describe('hostile input', () => {
    it('refuses loopback and metadata targets without OUTBOUND_ALLOWLIST; nothing is sent', async () => {
      const user = await signUp(closed);
      for (const url of [hook(), 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]:80/']) {
        const slack = await closed.request('POST', '/api/reporting/channels', { token: user.accessToken, body: bodies.slack(url) });
        expect([url, slack.status, slack.body.code]).toEqual([url, 400, 'ERR_OUTBOUND_001']);
        const webhook = await closed.request('POST', '/api/reporting/channels', { token: user.accessToken, body: bodies.webhook(url) });
        expect([url, webhook.status, webhook.body.code]).toEqual([url, 400, 'ERR_OUTBOUND_001']);
      }
      // Even where loopback is allowed, the metadata service is not.
      const meta = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: bodies.webhook('http://169.254.169.254/hook') });
      expect([meta.status, meta.body.code]).toEqual([400, 'ERR_OUTBOUND_001']);
      expect(receiver.requests).toEqual([]);
    });

    it('asks https of chat webhook URLs outside OUTBOUND_ALLOWLIST and never echoes a secret in an error', async () => {
      const plain = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: bodies.slack('http://93.184.215.14/services/T000/B000/XXXX') });
      expect([plain.status, plain.body.code, plain.body.relatedInfo.errors]).toEqual([400, 'ERR_CHAN_002', [{ path: 'secrets.webhookUrl', message: "'secrets.webhookUrl' must use https" }]]);
      const garbage = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: bodies.slack('not a url TOPSECRET-123') });
      expect(garbage.status).toBe(400);
      expect(garbage.text).not.toContain('TOPSECRET');
      const long = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: { ...bodies.teams(), secrets: { webhookUrl: `https://x.example.com/${'S'.repeat(5000)}` } } });
      expect(long.status).toBe(400);
      expect(long.text).not.toContain('S'.repeat(100));
    });

    it('refuses CR/LF in an e-mail subject, unknown placeholders, reserved webhook headers and bad recipients', async () => {
      const crlf = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: [mailbox()], subject: 'Hi\r\nBcc: victim@example.com' } }) });
      expect([crlf.status, crlf.body.code, crlf.body.relatedInfo.errors[0].path]).toEqual([400, 'ERR_CHAN_002', 'config.subject']);
      const injectedTo = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: ['a@example.com\r\nBcc: victim@example.com'] } }) });
      expect([injectedTo.status, injectedTo.body.code]).toEqual([400, 'ERR_CHAN_002']);
      const replyTo = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: [mailbox()], replyTo: 'x@example.com\nBcc: y@example.com' } }) });
      expect(replyTo.status).toBe(400);

      const token = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: [mailbox()], body: 'Hi {{process.env.SECRET}} {#label}' } }) });
      expect([token.status, token.body.relatedInfo.errors[0].message]).toEqual([400, expect.stringMatching(/^unknown placeholder \{\{process\.env\.SECRET\}\}/)]);

      const reserved = await app.request('POST', '/api/reporting/channels', { ...as(admin), body: { ...bodies.webhook(), config: { url: `${receiver.url}/x`, headers: { 'X-Service-Signature': 'v1=forged' } } } });
      expect([reserved.status, reserved.body.relatedInfo.errors]).toEqual([400, [{ path: 'config.headers', message: "'X-Service-Signature' is set by the service" }]]);
      const tooMany = await app.request('POST', '/api/reporting/channels', {
        ...as(admin),
        body: { ...bodies.webhook(), config: { url: `${receiver.url}/x`, headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) } },
      });
      expect(tooMany.status).toBe(400);

      const dupes = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: ['a@example.com'], cc: ['A@example.com'] } }) });
      expect([dupes.status, dupes.body.relatedInfo.errors]).toEqual([400, [{ path: 'config', message: 'a@example.com is named more than once' }]]);
    });

    it('refuses 10,000 recipients, more than 50 together, a huge config and unknown fields', async () => {
      const many = Array.from({ length: 10_000 }, (_, i) => `r${i}@example.com`);
      const huge = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: many } }) });
      expect([huge.status, huge.body.code]).toEqual([400, 'ERR_CHAN_002']);
      expect(huge.body.relatedInfo.errors.length).toBeLessThanOrEqual(20);
      const together = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: many.slice(0, 30), cc: many.slice(30, 51) } }) });
      expect([together.status, together.body.relatedInfo.errors]).toEqual([400, [{ path: 'config', message: 'At most 50 recipients in to, cc and bcc together' }]]);

      const keys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, 'x'.repeat(20)]));
      const bigConfig = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: [mailbox()], ...keys } }) });
      expect([bigConfig.status, bigConfig.body.code]).toEqual([400, 'ERR_VALID_001']);
      const longBody = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: [mailbox()], body: 'x'.repeat(10_001) } }) });
      expect([longBody.status, longBody.body.code]).toEqual([400, 'ERR_CHAN_002']);

      const unknownTop = await app.request('POST', '/api/reporting/channels', { ...as(member), body: { ...bodies.email(), owner: 'me' } });
      expect([unknownTop.status, unknownTop.body.code]).toEqual([400, 'ERR_VALID_001']);
      const unknownConfig = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ config: { to: [mailbox()], bcc_all: true } }) });
      expect([unknownConfig.status, unknownConfig.body.code, unknownConfig.body.relatedInfo.errors[0].path]).toEqual([400, 'ERR_CHAN_002', 'config.bcc_all']);
      const secretOnEmail = await app.request('POST', '/api/reporting/channels', { ...as(member), body: bodies.email({ secrets: { password: 'x' } }) });
      expect([secretOnEmail.status, secretOnEmail.body.relatedInfo.errors]).toEqual([400, [{ path: 'secrets.password', message: "'secrets.password' is not a secret of this kind" }]]);
      const kindChange = await app.request('POST', '/api/reporting/channels', { ...as(member), body: { ...bodies.email(), kind: 'smb' } });
      expect([kindChange.status, kindChange.body.code]).toEqual([400, 'ERR_VALID_001']);
      const badRef = await app.request('GET', `/api/reporting/channels/rch_${'x'.repeat(500)}`, as(viewer));
      expect([badRef.status, badRef.body.code]).toEqual([404, 'ERR_CHAN_001']);
    });
  });
});
