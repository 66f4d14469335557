import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { ChannelEntity } from '../../../db/reporting/channel.entity';
import { reencryptStoredSecrets } from '../../../db/secrets-at-rest';
import { activeKeyring } from '../../../domain/secret-box';
import { startTestApp, type TestApp } from '../../support/app';
import { addTeamProject, createKey, findInDatabase } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createTestDatasource } from '../../support/reporting';
import { inTeam } from '../../support/teams';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Issue 29, reporting channels (docs/security.md "Reporting channels: verified senders, budgets,
 * header secrets"): e-mail channels are a privilege of verified senders; a channel test mails only
 * the caller and spends Flow's re-send budgets; report-delivery e-mails spend the project's hourly
 * budget; webhook header values are write-only and encrypted; secrets do not follow a changed target.
 */
describe('reporting channels: verified senders, budgets, header secrets', () => {
  const PER_RECIPIENT = 2;
  const PER_PROJECT = 3;
  const REPORT_MAILS = 2;
  let app: TestApp;
  let receiver: WebhookReceiver;
  /** Another origin (another port): the host an admin would point a channel to. */
  let elsewhere: WebhookReceiver;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let viewer: SignedUpUser;
  let teamId: string;

  beforeAll(async () => {
    [app, receiver, elsewhere] = await Promise.all([
      startTestApp({
        env: {
          OUTBOUND_ALLOWLIST: '127.0.0.1',
          RESEND_PER_RECIPIENT_PER_HOUR: String(PER_RECIPIENT),
          RESEND_PER_PROJECT_PER_HOUR: String(PER_PROJECT),
          REPORT_MAIL_PER_PROJECT_PER_HOUR: String(REPORT_MAILS),
          REPORT_DELIVERY_RETRY_DELAYS: '1s',
        },
      }),
      startWebhookReceiver(),
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
    await Promise.all([app?.close(), receiver?.stop(), elsewhere?.stop()]);
  });

  beforeEach(() => {
    for (const r of [receiver, elsewhere]) {
      r.requests.length = 0;
      r.respondWith([], 200);
    }
  });

  const unique = () => randomBytes(4).toString('hex');
  const token = () => `Bearer tok-${randomBytes(12).toString('hex')}`;
  const mailbox = () => `r-${unique()}@example.com`;
  const as = (user: SignedUpUser) => ({ token: user.accessToken, headers: inTeam(teamId) });
  const mailsTo = (address: string) => app.smtp!.messages.filter((m) => m.envelopeTo.includes(address));
  const channelCount = async (projectId: string) => (await app.services.db.query(`SELECT count(*)::int AS n FROM reporting_channels WHERE project_id = $1`, [projectId]))[0].n;
  const stored = (id: string) => app.services.db.getRepository(ChannelEntity).findOneByOrFail({ id });

  async function create(user: SignedUpUser, body: Record<string, unknown>, headers: Record<string, string> = inTeam(teamId)) {
    const res = await app.request('POST', '/api/reporting/channels', { token: user.accessToken, headers, body: { name: `C ${unique()}`, ...body } });
    expect([res.status, res.body.code ?? null]).toEqual([201, null]);
    return res.body;
  }

  describe('e-mail is a privilege of verified senders', () => {
    it('an unverified account cannot create, change or test an e-mail channel (403 ERR_AUTH_006); nothing is stored or sent', async () => {
      const user = await signUp(app);
      const projectId = (await app.services.db.query(`SELECT id FROM projects WHERE owner_id = $1`, [user.id]))[0].id;
      const victims = [mailbox(), mailbox()];
      const refused = await app.request('POST', '/api/reporting/channels', {
        token: user.accessToken,
        body: { name: 'Spam', kind: 'email', config: { to: victims, subject: 'You won', body: 'Click here' } },
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'ERR_AUTH_006', relatedInfo: { required: 'caller' } });
      expect(await channelCount(projectId)).toBe(0);

      // A channel made while the account was verified; its verification lapses.
      const spare = await signUp(app, { verified: true });
      const ch = await create(spare, { kind: 'email', config: { to: [victims[0]] } }, {});
      await app.services.db.query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [spare.id]);
      const test = await app.request('POST', `/api/reporting/channels/${ch.id}/test`, { token: spare.accessToken, body: {} });
      expect([test.status, test.body.code]).toEqual([403, 'ERR_AUTH_006']);
      const patch = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { token: spare.accessToken, body: { config: { to: victims } } });
      expect([patch.status, patch.body.code]).toEqual([403, 'ERR_AUTH_006']);
      expect((await stored(ch.id)).config.to).toEqual([victims[0]]);
      // Renaming changes nobody's mail.
      expect((await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { token: spare.accessToken, body: { name: `Renamed ${unique()}` } })).status).toBe(200);
      expect(victims.flatMap(mailsTo)).toEqual([]);
    });

    it('the channel test mails only the caller, never the channel’s recipients', async () => {
      const [a, b] = [mailbox(), mailbox()];
      const ch = await create(member, { kind: 'email', config: { to: [a], bcc: [b], subject: 'Attacker subject', replyTo: 'attacker@example.com' } });
      const res = await app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...as(member), body: {} });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, durationMs: expect.any(Number), details: { recipients: 2, sentToCaller: true } });
      const mail = await app.smtp!.waitForMessage((m) => m.envelopeTo.includes(member.email) && m.subject.includes(ch.shortId));
      expect(mail.envelopeTo).toEqual([member.email]);
      expect(mail.subject).toBe(`Formwork test message (${ch.shortId})`);
      expect(mail.raw.toString()).not.toContain('attacker@example.com');
      expect([...mailsTo(a), ...mailsTo(b)]).toEqual([]);
    });

    it('channel tests spend the re-send budgets: per address (429 ERR_LIMIT_012) and per project (429 ERR_LIMIT_013), with Retry-After', async () => {
      const solo = await signUp(app, { verified: true });
      const team = await addTeamProject(app.services.db, solo.id, [{ userId: member.id, role: 'member' }]);
      const inSolo = (u: SignedUpUser) => ({ token: u.accessToken, headers: inTeam(team) });
      const recipient = mailbox();
      const ch = (await app.request('POST', '/api/reporting/channels', { ...inSolo(solo), body: { name: `Budget ${unique()}`, kind: 'email', config: { to: [recipient] } } })).body;
      const testAs = (u: SignedUpUser) => app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...inSolo(u), body: {} });
      for (let i = 0; i < PER_RECIPIENT; i += 1) expect((await testAs(solo)).status).toBe(200);
      const perAddress = await testAs(solo);
      expect(perAddress.status).toBe(429);
      expect(perAddress.body).toMatchObject({ code: 'ERR_LIMIT_012', relatedInfo: { limit: PER_RECIPIENT, retryAfter: expect.any(Number) } });
      expect(Number(perAddress.headers.get('retry-after'))).toBeGreaterThan(0);
      // That refused call spent the project's third point: another member's test waits too.
      const perProject = await testAs(member);
      expect(perProject.status).toBe(429);
      expect(perProject.body).toMatchObject({ code: 'ERR_LIMIT_013', relatedInfo: { limit: PER_PROJECT, retryAfter: expect.any(Number) } });
      expect(Number(perProject.headers.get('retry-after'))).toBeGreaterThan(0);
      await waitFor(() => (app.smtp!.messages.filter((m) => m.envelopeTo.includes(solo.email) && m.subject.includes(ch.shortId)).length >= PER_RECIPIENT ? true : undefined), {
        what: 'the allowed test mails',
      });
      expect(app.smtp!.messages.filter((m) => m.envelopeTo.includes(solo.email) && m.subject.includes(ch.shortId))).toHaveLength(PER_RECIPIENT);
      expect(mailsTo(recipient)).toEqual([]);
    });

    it('a run that delivers by e-mail needs a verified sender; delivery mails stop at REPORT_MAIL_PER_PROJECT_PER_HOUR', async () => {
      const ana = await signUp(app, { verified: true });
      const table = `chan_sec_${unique()}`;
      await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
      try {
        await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'Apple')`);
        const ds = await createTestDatasource(app, ana.accessToken, `DS ${unique()}`);
        const q = await app.request('POST', '/api/reporting/queries', { token: ana.accessToken, body: { name: `Q ${unique()}`, datasourceId: ds.id, text: `SELECT label FROM ${table}` } });
        expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, { token: ana.accessToken, body: {} })).status).toBe(201);
        const r = await app.request('POST', '/api/reporting/reports', {
          token: ana.accessToken,
          body: { name: `R ${unique()}`, datasets: [{ name: 'items', queryId: q.body.id }], outputs: [{ format: 'csv' }] },
        });
        expect((await app.request('POST', `/api/reporting/reports/${r.body.id}/publish`, { token: ana.accessToken, body: {} })).status).toBe(201);
        const recipients = [mailbox(), mailbox(), mailbox()];
        const ch = await create(ana, { kind: 'email', config: { to: recipients } }, {});
        const key = (await createKey(app, ana.accessToken, { name: `runner ${unique()}`, permissions: { read_reports: true, run_reports: true } })).plainKey;

        // The key answers for its project owner: unverified, no run is opened and nothing is sent.
        await app.services.db.query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [ana.id]);
        const refused = await app.request('POST', `/api/reporting/reports/${r.body.id}/runs`, { token: key, body: { channelIds: [ch.shortId] } });
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ code: 'ERR_AUTH_006', relatedInfo: { required: 'project_owner' } });
        expect((await app.services.db.query(`SELECT count(*)::int AS n FROM reporting_runs WHERE report_id = $1`, [r.body.id]))[0].n).toBe(0);
        await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [ana.id]);

        // Three recipients, a budget of two e-mails an hour: the third is not sent and waits.
        const started = await app.request('POST', `/api/reporting/reports/${r.body.id}/runs`, { token: key, body: { channelIds: [ch.shortId] } });
        expect(started.status).toBe(201);
        const deliveries = await waitFor(
          async () => {
            const res = await app.request('GET', `/api/reporting/runs/${started.body.runId}/deliveries`, { token: key });
            const data: any[] = res.body.data ?? [];
            return data.length === 3 && data.every((d) => d.attempts.length > 0) ? data : undefined;
          },
          { what: 'an attempt of every delivery' },
        );
        const spent = deliveries.filter((d) => d.status !== 'completed');
        expect(deliveries.filter((d) => d.status === 'completed')).toHaveLength(REPORT_MAILS);
        expect(spent).toHaveLength(1);
        expect(spent[0].attempts[0].error).toBe("The project's hourly e-mail budget is spent (REPORT_MAIL_PER_PROJECT_PER_HOUR): not sent");
        await waitFor(() => (recipients.flatMap(mailsTo).length >= REPORT_MAILS ? true : undefined), { what: 'the budgeted delivery mails' });
        expect(recipients.flatMap(mailsTo)).toHaveLength(REPORT_MAILS);
      } finally {
        await app.services.db.query(`DROP TABLE IF EXISTS ${table}`);
      }
    });
  });

  describe('webhook header values are secrets', () => {
    it('are answered as {set: true} to admins, viewers and read_reports keys, and stored encrypted', async () => {
      const bearer = token();
      const created = await app.request('POST', '/api/reporting/channels', {
        ...as(admin),
        body: { name: `Hook ${unique()}`, kind: 'webhook', config: { url: `${receiver.url}/erp`, headers: { Authorization: bearer, 'X-Tenant': 'acme-tenant-value' } } },
      });
      expect(created.status).toBe(201);
      expect(created.body.config.headers).toEqual({ Authorization: { set: true }, 'X-Tenant': { set: true } });
      expect(created.text).not.toContain(bearer);
      const reader = await createKey(app, owner.accessToken, { name: `reader ${unique()}`, permissions: { read_reports: true } }, teamId);
      for (const [who, opts] of [
        ['admin', as(admin)],
        ['viewer', as(viewer)],
        ['read_reports key', { token: reader.plainKey }],
      ] as const) {
        const one = await app.request('GET', `/api/reporting/channels/${created.body.id}`, opts);
        const list = await app.request('GET', '/api/reporting/channels?kind=webhook', opts);
        expect([who, one.status, list.status]).toEqual([who, 200, 200]);
        expect([who, one.body.config.headers]).toEqual([who, { Authorization: { set: true }, 'X-Tenant': { set: true } }]);
        for (const text of [one.text, list.text]) {
          expect(text).not.toContain(bearer);
          expect(text).not.toContain('acme-tenant-value');
        }
      }
      const [row] = await app.services.db.query(`SELECT config FROM reporting_channels WHERE id = $1`, [created.body.id]);
      expect(row.config.headers.Authorization).toMatch(/^enc:v1:/);
      expect(await findInDatabase(app.services.db, bearer.slice(7))).toEqual([]);

      // The receiver still gets the values.
      const test = await app.request('POST', `/api/reporting/channels/${created.body.id}/test`, { ...as(admin), body: {} });
      expect(test.body).toMatchObject({ ok: true });
      const [req] = await receiver.waitForRequests(1);
      expect(req.headers).toMatchObject({ authorization: bearer, 'x-tenant': 'acme-tenant-value' });
    });

    it('an update keeps values left out or sent back as {set: true}, replaces given ones, and refuses a marker with nothing stored', async () => {
      const bearer = token();
      const ch = await create(admin, { kind: 'webhook', config: { url: `${receiver.url}/a`, headers: { Authorization: bearer, 'X-Tenant': 'acme' } } });
      // Same origin, other path, headers left out: kept.
      const moved = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { url: `${receiver.url}/b` } } });
      expect(moved.status).toBe(200);
      expect((await stored(ch.id)).config.headers).toEqual({ Authorization: bearer, 'X-Tenant': 'acme' });
      // A marker keeps, a string replaces, a name left out of `headers` is removed.
      const edited = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, {
        ...as(admin),
        body: { config: { url: `${receiver.url}/b`, headers: { Authorization: { set: true }, 'X-Region': 'eu' } } },
      });
      expect(edited.status).toBe(200);
      expect(edited.body.config.headers).toEqual({ Authorization: { set: true }, 'X-Region': { set: true } });
      expect((await stored(ch.id)).config.headers).toEqual({ Authorization: bearer, 'X-Region': 'eu' });
      const noValue = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { url: `${receiver.url}/b`, headers: { 'X-Unknown': { set: true } } } } });
      expect([noValue.status, noValue.body.code, noValue.body.relatedInfo.errors[0].path]).toEqual([400, 'ERR_CHAN_002', 'config.headers.X-Unknown']);
      expect((await stored(ch.id)).config.headers).toEqual({ Authorization: bearer, 'X-Region': 'eu' });
    });

    it('rows stored in plaintext before still work, and the start-up step encrypts them', async () => {
      const ch = await create(admin, { kind: 'webhook', config: { url: `${receiver.url}/legacy` } });
      const legacy = `legacy-${unique()}`;
      await app.services.db.query(`UPDATE reporting_channels SET config = jsonb_set(config, '{headers}', jsonb_build_object('X-Api-Key', $2::text)) WHERE id = $1`, [ch.id, legacy]);
      const read = await app.request('GET', `/api/reporting/channels/${ch.id}`, as(viewer));
      expect(read.body.config.headers).toEqual({ 'X-Api-Key': { set: true } });
      expect(read.text).not.toContain(legacy);
      expect((await app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...as(admin), body: {} })).body).toMatchObject({ ok: true });
      expect((await receiver.waitForRequests(1))[0].headers['x-api-key']).toBe(legacy);
      const counts = await reencryptStoredSecrets(app.services.db, activeKeyring(), 'plaintext');
      expect(counts['reporting_channels.config']).toBeGreaterThanOrEqual(1);
      const [row] = await app.services.db.query(`SELECT config FROM reporting_channels WHERE id = $1`, [ch.id]);
      expect(row.config.headers['X-Api-Key']).toMatch(/^enc:v1:/);
      expect((await stored(ch.id)).config.headers).toEqual({ 'X-Api-Key': legacy });
    });
  });

  describe('a channel test has a deadline that closes its socket (issue 29, "Deadlines everywhere")', () => {
    it('every kind that connects out ends its test against a server that accepts and goes silent, and hangs up', async () => {
      // A server that completes TCP's handshake and never says a word (no HTTP answer, no SSH banner).
      const sockets: Socket[] = [];
      const silent = createServer((socket) => {
        sockets.push(socket);
        socket.on('error', () => undefined);
        // Read (and drop) what the client sends, so that its hang-up ends this socket.
        socket.resume();
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as AddressInfo).port;
      const at = `http://127.0.0.1:${port}`;
      try {
        const channels = await Promise.all(
          [
            { kind: 'webhook', config: { url: `${at}/hook` } },
            { kind: 'slack', config: { text: 'Report' }, secrets: { webhookUrl: `${at}/slack` } },
            { kind: 'teams', config: { title: 'Report' }, secrets: { webhookUrl: `${at}/teams` } },
            { kind: 'webdav', config: { baseUrl: `${at}/dav`, username: 'u' }, secrets: { password: 'dav-password' } },
            { kind: 's3', config: { bucket: 'reports', region: 'eu-west-1', endpoint: at, forcePathStyle: true }, secrets: { accessKeyId: 'AKIATEST', secretAccessKey: 'secret-test-key' } },
            { kind: 'sftp', config: { host: '127.0.0.1', port, username: 'reports', directory: '/upload', hostKeySha256: `SHA256:${'A'.repeat(43)}` }, secrets: { password: 'sftp-password' } },
          ].map((body) => create(admin, body)),
        );
        const tests = await Promise.all(channels.map((ch) => app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...as(admin), body: {} })));
        for (const [i, res] of tests.entries()) {
          // 200 with ok false: the test ran and failed, as a test of an unreachable target does.
          expect([channels[i].kind, res.status, res.body.ok]).toEqual([channels[i].kind, 200, false]);
          expect([channels[i].kind, res.body.error]).toEqual([channels[i].kind, expect.stringMatching(/in time|within 10 s|No answer within/)]);
        }
        // Each test's socket was closed by the service, not left open to the silent server.
        expect(sockets.length).toBeGreaterThanOrEqual(channels.length);
        await waitFor(() => sockets.every((socket) => socket.closed), { what: 'the service to hang up on the silent server' });
      } finally {
        sockets.forEach((socket) => socket.destroy());
        await new Promise((resolve) => silent.close(resolve));
      }
    });
  });

  describe('secrets do not follow a changed target (400 ERR_CHAN_005)', () => {
    it('a webhook moved to another origin needs its header values again; the old ones never reach it', async () => {
      const bearer = token();
      const ch = await create(admin, { kind: 'webhook', config: { url: `${receiver.url}/erp`, headers: { Authorization: bearer } } });
      for (const config of [{ url: `${elsewhere.url}/steal` }, { url: `${elsewhere.url}/steal`, headers: { Authorization: { set: true } } }]) {
        const refused = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config } });
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ code: 'ERR_CHAN_005', relatedInfo: { field: 'config.headers.Authorization', fields: ['config.headers.Authorization'], changed: ['config.url'] } });
      }
      expect((await stored(ch.id)).config.url).toBe(`${receiver.url}/erp`);
      const fresh = token();
      const moved = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { url: `${elsewhere.url}/new`, headers: { Authorization: fresh } } } });
      expect(moved.status).toBe(200);
      expect((await app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...as(admin), body: {} })).body).toMatchObject({ ok: true });
      const [req] = await elsewhere.waitForRequests(1);
      expect(req.headers.authorization).toBe(fresh);
      expect(JSON.stringify(elsewhere.requests)).not.toContain(bearer);
    });

    it('an SFTP host, port or host key change needs the password or key again; with it, the new one is stored', async () => {
      const sftpConfig = { host: 'files.example.com', username: 'reports', directory: '/upload', hostKeySha256: `SHA256:${'A'.repeat(43)}` };
      const ch = await create(admin, { kind: 'sftp', config: sftpConfig, secrets: { password: 'old-sftp-password' } });
      for (const change of [{ host: 'attacker.example.net' }, { port: 2222 }, { hostKeySha256: `SHA256:${'B'.repeat(43)}` }]) {
        const refused = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { ...sftpConfig, ...change } } });
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ code: 'ERR_CHAN_005', relatedInfo: { field: 'secrets.password', fields: ['secrets.password'], changed: [`config.${Object.keys(change)[0]}`] } });
      }
      expect((await stored(ch.id)).config.host).toBe('files.example.com');
      // The user name is not a target: the same server gets the password.
      expect((await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { ...sftpConfig, username: 'other' } } })).status).toBe(200);
      const moved = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, {
        ...as(admin),
        body: { config: { ...sftpConfig, host: 'files2.example.com' }, secrets: { password: 'new-sftp-password' } },
      });
      expect(moved.status).toBe(200);
      const after = await stored(ch.id);
      expect([after.config.host, after.secrets.password.value]).toEqual(['files2.example.com', 'new-sftp-password']);
    });

    it('a WebDAV baseUrl change needs the password again; the old password never reaches the new server', async () => {
      const oldPassword = `old-${unique()}`;
      const ch = await create(admin, { kind: 'webdav', config: { baseUrl: `${receiver.url}/dav`, username: 'u' }, secrets: { password: oldPassword } });
      const refused = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { baseUrl: `${elsewhere.url}/dav`, username: 'u' } } });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'ERR_CHAN_005', relatedInfo: { field: 'secrets.password', changed: ['config.baseUrl'] } });
      expect((await stored(ch.id)).config.baseUrl).toBe(`${receiver.url}/dav`);
      expect(elsewhere.requests).toEqual([]);

      const newPassword = `new-${unique()}`;
      const moved = await app.request('PATCH', `/api/reporting/channels/${ch.id}`, { ...as(admin), body: { config: { baseUrl: `${elsewhere.url}/dav`, username: 'u' }, secrets: { password: newPassword } } });
      expect(moved.status).toBe(200);
      await app.request('POST', `/api/reporting/channels/${ch.id}/test`, { ...as(admin), body: {} });
      const [req] = await elsewhere.waitForRequests(1);
      expect(req.headers.authorization).toBe(`Basic ${Buffer.from(`u:${newPassword}`).toString('base64')}`);
      expect(JSON.stringify(elsewhere.requests)).not.toContain(Buffer.from(`u:${oldPassword}`).toString('base64'));
    });
  });
});
