import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdir, readdir } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createOutboundGuard, type OutboundGuard } from '../../../adapters/http/outbound';
import type { Mailer } from '../../../adapters/mail/mailer';
import type { ChannelContext, ChannelSender, DeliveryFile, DeliveryMessage } from '../../../adapters/channels/channel-sender';
import { s3Sender } from '../../../adapters/channels/s3';
import { sftpSender } from '../../../adapters/channels/sftp';
import { webdavSender } from '../../../adapters/channels/webdav';
import { readShared, startRcloneServer, type RcloneServer } from '../../support/rclone-server';
import { freePort } from '../../../scripts/free-port';
import { startS3Server, type S3TestServer } from '../../support/s3-server';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * File-share channels (docs/reporting.md "File shares"): the s3, sftp and webdav senders against real
 * servers (versitygw, `rclone serve sftp|webdav`), called directly with in-memory files: each share
 * receives the file; conflict modes unique/overwrite/fail; the pinned SFTP host key; test(); and the
 * hostile side (the outbound guard, `..` in names and folders, a server that is down).
 */

const allowLocal = createOutboundGuard(['127.0.0.1']);
const strictGuard = createOutboundGuard([]);
const noMailer = {} as Mailer;
/** Guards whose DNS answers every name with 127.0.0.1: `*.share.test` names reach the local servers only through the guard's answer. */
const resolvesLocal = async () => [{ address: '127.0.0.1', family: 4 }];
const namedLocal = createOutboundGuard(['127.0.0.1'], { lookup: resolvesLocal });
const namedStrict = createOutboundGuard([], { lookup: resolvesLocal });

function memoryFile(filename: string, text: string, format: DeliveryFile['format'] = 'pdf'): DeliveryFile {
  const body = Buffer.from(text);
  return {
    filename,
    format,
    contentType: format === 'pdf' ? 'application/pdf' : format === 'csv' ? 'text/csv' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    bytes: body.length,
    open: async () => Readable.from([body]),
    url: 'https://formwork.example/download',
    expiresAt: '2026-12-01T00:00:00.000Z',
    reportName: 'Sales',
  };
}

function message(files: DeliveryFile[], parameters: Record<string, unknown> = {}): DeliveryMessage {
  return {
    event: 'report.run.completed',
    eventId: 'evt_1',
    deliveryId: 'rdlv_1',
    projectId: 'prj_1',
    report: { id: 'rpt_1', name: 'Sales report', slug: 'sales' },
    run: { id: 'rrun_1', shortId: 'R1', status: 'delivering', trigger: 'manual', scheduledFor: '2026-11-20T08:00:00.000Z', timezone: 'Europe/Berlin', parameters },
    files,
    runUrl: 'https://formwork.example/api/reporting/runs/rrun_1',
  };
}

function context(config: Record<string, unknown>, secrets: Record<string, string>, guard: OutboundGuard = allowLocal): ChannelContext {
  return { channelId: 'rch_1', projectId: 'prj_1', config, secrets, guard, mailer: noMailer };
}

const send = (sender: ChannelSender, ctx: ChannelContext, msg: DeliveryMessage) => sender.send(ctx, sender.targets(ctx.config)[0], msg);

describe('file-share channels', () => {
  describe('sftp', () => {
    let server: RcloneServer;
    let n = 0;
    /** A fresh directory per test (the directory must exist on SFTP). */
    let dir: string;
    const config = (extra: Record<string, unknown> = {}) => ({ host: server.host, port: server.port, username: server.username, directory: dir, hostKeySha256: `SHA256:${server.hostKeySha256}`, ...extra });
    const secrets = () => ({ password: server.password });
    const ls = async () => (await readdir(`${server.rootDir}/${dir}`)).sort();

    beforeAll(async () => {
      server = await startRcloneServer('sftp');
    });
    afterAll(async () => server?.remove());
    beforeEach(async () => {
      n += 1;
      dir = `out${n}`;
      await mkdir(`${server.rootDir}/${dir}`);
    });

    it('uploads the file under its own name, no .part left behind', async () => {
      const result = await send(sftpSender, context(config(), secrets()), message([memoryFile('sales-2026-11-20.pdf', '%PDF one')]));
      expect(result).toEqual({ outcome: 'delivered', remoteRef: `127.0.0.1:${dir}/sales-2026-11-20.pdf` });
      expect(await ls()).toEqual(['sales-2026-11-20.pdf']);
      expect(await readShared(server.rootDir, `${dir}/sales-2026-11-20.pdf`)).toBe('%PDF one');
    });

    it('conflict unique writes name-1, overwrite replaces, fail is permanent and keeps the original', async () => {
      const ctx = (conflict: string) => context(config({ conflict }), secrets());
      expect((await send(sftpSender, ctx('unique'), message([memoryFile('r.pdf', 'first')]))).outcome).toBe('delivered');
      const second = await send(sftpSender, ctx('unique'), message([memoryFile('r.pdf', 'second')]));
      expect(second).toMatchObject({ outcome: 'delivered', remoteRef: `127.0.0.1:${dir}/r-1.pdf` });
      expect(await ls()).toEqual(['r-1.pdf', 'r.pdf']);
      expect(await send(sftpSender, ctx('overwrite'), message([memoryFile('r.pdf', 'third')]))).toMatchObject({ outcome: 'delivered' });
      expect(await readShared(server.rootDir, `${dir}/r.pdf`)).toBe('third');
      const failed = await send(sftpSender, ctx('fail'), message([memoryFile('r.pdf', 'fourth')]));
      expect(failed).toEqual({ outcome: 'permanent', error: 'File exists: r.pdf' });
      expect(await readShared(server.rootDir, `${dir}/r.pdf`)).toBe('third');
      expect(await ls()).toEqual(['r-1.pdf', 'r.pdf']);
    });

    it('refuses a host key that does not match the pin: permanent, nothing written; test() shows the observed key', async () => {
      const wrong = config({ hostKeySha256: 'A'.repeat(43) });
      const result = await send(sftpSender, context(wrong, secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(result.outcome).toBe('permanent');
      expect(result.error).toBe(`SFTP host key does not match the pinned one (the server showed SHA256:${server.hostKeySha256})`);
      expect(await ls()).toEqual([]);
      const test = await sftpSender.test({ ...context(wrong, secrets()), channelShortId: 'CH1' });
      expect(test).toEqual({ ok: false, error: result.error, details: { observedHostKeySha256: `SHA256:${server.hostKeySha256}` } });
    });

    it('accepts the pin with or without SHA256: and padding; test() writes and deletes its file', async () => {
      const test = await sftpSender.test({ ...context(config({ hostKeySha256: `${server.hostKeySha256}=` }), secrets()), channelShortId: 'CH1' });
      expect(test).toEqual({ ok: true, details: { observedHostKeySha256: `SHA256:${server.hostKeySha256}` } });
      expect(await ls()).toEqual([]);
    });

    it('a wrong password is permanent', async () => {
      const result = await send(sftpSender, context(config(), { password: 'wrong' }), message([memoryFile('r.pdf', 'x')]));
      expect(result).toEqual({ outcome: 'permanent', error: 'The SFTP server refused the credentials' });
    });

    it('logs in with a private key and its passphrase; a wrong passphrase is permanent', async () => {
      const key = { privateKey: server.clientKey, passphrase: server.clientKeyPassphrase };
      expect(await send(sftpSender, context(config(), key), message([memoryFile('k.pdf', 'by key')]))).toMatchObject({ outcome: 'delivered' });
      expect(await readShared(server.rootDir, `${dir}/k.pdf`)).toBe('by key');
      const wrong = await send(sftpSender, context(config(), { ...key, passphrase: 'nope' }), message([memoryFile('k2.pdf', 'x')]));
      expect(wrong).toEqual({ outcome: 'permanent', error: 'The private key could not be read (wrong format or passphrase)' });
      const garbage = await send(sftpSender, context(config(), { privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n' }), message([memoryFile('k2.pdf', 'x')]));
      expect(garbage.outcome).toBe('permanent');
      expect(await ls()).toEqual(['k.pdf']);
    });

    it('a filenamePattern renders the run, several CSVs get their dataset suffix, a missing directory is permanent', async () => {
      const msg = message([memoryFile('sales-2026-11-20-orders.csv', 'o', 'csv'), memoryFile('sales-2026-11-20-items.csv', 'i', 'csv'), memoryFile('sales-2026-11-20.pdf', 'p')], { region: 'EU/../north' });
      const result = await send(sftpSender, context(config({ filenamePattern: '{param.region}_{scheduledFor:yyyyMMdd}' }), secrets()), msg);
      expect(result.outcome).toBe('delivered');
      expect(await ls()).toEqual(['EU-..-north_20261120-items.csv', 'EU-..-north_20261120-orders.csv', 'EU-..-north_20261120.pdf']);
      const missing = await send(sftpSender, context(config({ directory: `${dir}/nope` }), secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(missing).toEqual({ outcome: 'permanent', error: 'SFTP directory or file not found' });
    });

    it('hostile: a directory with .. is refused before connecting, a file name cannot climb out', async () => {
      const up = await send(sftpSender, context(config({ directory: `${dir}/../..` }), secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(up).toEqual({ outcome: 'permanent', error: "Channel configuration invalid: directory must not contain '..'" });
      const climbing = await send(sftpSender, context(config(), secrets()), message([memoryFile('../../escape.pdf', 'x')]));
      expect(climbing).toMatchObject({ outcome: 'delivered', remoteRef: `127.0.0.1:${dir}/escape.pdf` });
      expect(await ls()).toEqual(['escape.pdf']);
      const pattern = await send(sftpSender, context(config({ filenamePattern: '../{slug}/../../x' }), secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(pattern).toMatchObject({ outcome: 'delivered', remoteRef: `127.0.0.1:${dir}/sales-..-..-x.pdf` });
    });

    it('hostile: the outbound guard refuses 127.0.0.1 unless allow-listed; nothing is written', async () => {
      const result = await send(sftpSender, context(config(), secrets(), strictGuard), message([memoryFile('r.pdf', 'x')]));
      expect(result.outcome).toBe('permanent');
      expect(result.error).toMatch(/not allowed/);
      const test = await sftpSender.test({ ...context(config(), secrets(), strictGuard), channelShortId: 'CH1' });
      expect(test.ok).toBe(false);
      expect(await ls()).toEqual([]);
    });

    it('hostile: a name that resolves to a private address is refused; the socket goes to the address the guard checked', async () => {
      const named = config({ host: 'sftp.share.test' });
      expect(await send(sftpSender, context(named, secrets(), namedStrict), message([memoryFile('r.pdf', 'x')]))).toMatchObject({ outcome: 'permanent', error: expect.stringMatching(/not allowed/) });
      expect(await ls()).toEqual([]);
      // sftp.share.test does not exist in the system's DNS: only the guard's answer can have reached the server.
      expect(await send(sftpSender, context(named, secrets(), namedLocal), message([memoryFile('r.pdf', 'x')]))).toEqual({ outcome: 'delivered', remoteRef: `sftp.share.test:${dir}/r.pdf` });
    });

    it('a server that is down is retried', async () => {
      const port = await freePort();
      const result = await send(sftpSender, context(config({ port }), secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(result).toEqual({ outcome: 'retry', error: 'Connection refused' });
    });
  });

  describe('webdav', () => {
    let server: RcloneServer;
    let n = 0;
    let dir: string;
    const config = (extra: Record<string, unknown> = {}) => ({ baseUrl: server.url, directory: dir, username: server.username, ...extra });
    const secrets = () => ({ password: server.password });
    const ls = async () => (await readdir(`${server.rootDir}/${dir}`)).sort();

    beforeAll(async () => {
      server = await startRcloneServer('webdav');
    });
    afterAll(async () => server?.remove());
    beforeEach(() => {
      n += 1;
      dir = `reports/run ${n}`;
    });

    it('creates the folders and uploads the file', async () => {
      const result = await send(webdavSender, context(config(), secrets()), message([memoryFile('sales.pdf', '%PDF dav')]));
      expect(result).toEqual({ outcome: 'delivered', remoteRef: `/${dir}/sales.pdf` });
      expect(await readShared(server.rootDir, `${dir}/sales.pdf`)).toBe('%PDF dav');
      expect(webdavSender.targets(config())).toEqual([{ key: 'default', masked: `127.0.0.1:${server.port}/${dir}/` }]);
    });

    it('conflict unique writes name-1, overwrite replaces, fail is permanent and keeps the original', async () => {
      const ctx = (conflict: string) => context(config({ conflict }), secrets());
      expect((await send(webdavSender, ctx('unique'), message([memoryFile('r.pdf', 'first')]))).outcome).toBe('delivered');
      expect(await send(webdavSender, ctx('unique'), message([memoryFile('r.pdf', 'second')]))).toMatchObject({ outcome: 'delivered', remoteRef: `/${dir}/r-1.pdf` });
      expect(await send(webdavSender, ctx('overwrite'), message([memoryFile('r.pdf', 'third')]))).toMatchObject({ outcome: 'delivered' });
      expect(await readShared(server.rootDir, `${dir}/r.pdf`)).toBe('third');
      expect(await send(webdavSender, ctx('fail'), message([memoryFile('r.pdf', 'fourth')]))).toEqual({ outcome: 'permanent', error: 'File exists: r.pdf' });
      expect(await readShared(server.rootDir, `${dir}/r.pdf`)).toBe('third');
      expect(await ls()).toEqual(['r-1.pdf', 'r.pdf']);
    });

    it('test() writes and deletes its file; a wrong password is permanent with the status', async () => {
      expect(await webdavSender.test({ ...context(config(), secrets()), channelShortId: 'CH1' })).toEqual({ ok: true, details: { path: `/${dir}/formwork-test-CH1.txt` } });
      expect(await ls()).toEqual([]);
      const wrong = await send(webdavSender, context(config(), { password: 'nope' }), message([memoryFile('r.pdf', 'x')]));
      expect(wrong).toEqual({ outcome: 'permanent', statusCode: 401, error: 'WebDAV server refused the credentials or access (401)' });
    });

    it('without createDirectories a missing folder is permanent', async () => {
      const result = await send(webdavSender, context(config({ createDirectories: false }), secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(result).toMatchObject({ outcome: 'permanent', statusCode: 404 });
    });

    it('hostile: .. in the directory is refused, names cannot climb out, the guard refuses 127.0.0.1', async () => {
      expect(await send(webdavSender, context(config({ directory: 'a/../../etc' }), secrets()), message([memoryFile('r.pdf', 'x')]))).toEqual({
        outcome: 'permanent',
        error: "Channel configuration invalid: directory must not contain '..'",
      });
      const climbing = await send(webdavSender, context(config({ filenamePattern: '..%2F..%2F{slug}' }), secrets()), message([memoryFile('../r.pdf', 'x')]));
      expect(climbing).toEqual({ outcome: 'delivered', remoteRef: `/${dir}/2F..-2Fsales.pdf` });
      const refused = await send(webdavSender, context(config(), secrets(), strictGuard), message([memoryFile('r.pdf', 'x')]));
      expect(refused.outcome).toBe('permanent');
      expect(refused.error).toMatch(/not allowed/);
      expect(await ls()).toEqual(['2F..-2Fsales.pdf']);
    });

    it('a redirect is a permanent failure; a 5xx is retried; a server that is down is retried', async () => {
      const receiver: WebhookReceiver = await startWebhookReceiver();
      try {
        receiver.respondWith([{ status: 302, headers: { location: `${server.url}elsewhere/` } }]);
        const moved = await send(webdavSender, context({ baseUrl: receiver.url, directory: 'x', username: 'u' }, { password: 'p' }), message([memoryFile('r.pdf', 'x')]));
        expect(moved).toEqual({ outcome: 'permanent', statusCode: 302, error: 'WebDAV server redirected the request (302): use the final URL as baseUrl' });
        expect(receiver.requests).toHaveLength(1);
        // A PUT answered 307 is not sent again to the new place (nor are the credentials).
        receiver.respondWith([{ status: 307, headers: { location: `${server.url}moved.pdf` } }]);
        const put = await send(webdavSender, context({ baseUrl: receiver.url, directory: '', username: server.username, conflict: 'overwrite' }, secrets()), message([memoryFile('moved.pdf', 'x')]));
        expect(put).toMatchObject({ outcome: 'permanent', statusCode: 307 });
        expect(receiver.requests.map((r) => r.method)).toEqual(['PROPFIND', 'PUT']);
        expect(await readShared(server.rootDir, 'moved.pdf')).toBeUndefined();
        receiver.respondWith([503]);
        const busy = await send(webdavSender, context({ baseUrl: receiver.url, directory: '' }, {}), message([memoryFile('r.pdf', 'x')]));
        expect(busy).toEqual({ outcome: 'retry', statusCode: 503, error: 'WebDAV server answered 503 while checking the name' });
      } finally {
        await receiver.stop();
      }
      const down = await send(webdavSender, context({ baseUrl: `http://127.0.0.1:${await freePort()}/`, directory: 'x' }, {}), message([memoryFile('r.pdf', 'x')]));
      expect(down).toEqual({ outcome: 'retry', error: 'Connection refused' });
    });

    it('hostile: a name that resolves to a private address is refused; the request goes to the address the guard checked', async () => {
      const named = config({ baseUrl: `http://dav.share.test:${server.port}/` });
      expect(await send(webdavSender, context(named, secrets(), namedStrict), message([memoryFile('r.pdf', 'x')]))).toMatchObject({ outcome: 'permanent', error: expect.stringMatching(/not allowed/) });
      expect(await send(webdavSender, context(named, secrets(), namedLocal), message([memoryFile('r.pdf', 'x')]))).toEqual({ outcome: 'delivered', remoteRef: `/${dir}/r.pdf` });
    });

    it('hostile: a file past 100 MB is refused before it is read', async () => {
      const huge = { ...memoryFile('big.csv', '', 'csv'), bytes: 100 * 1024 * 1024 + 1, open: async () => { throw new Error('must not be read'); } };
      const result = await send(webdavSender, context(config({ conflict: 'overwrite' }), secrets()), message([huge]));
      expect(result).toEqual({ outcome: 'permanent', error: 'big.csv is larger than the 100 MB WebDAV uploads are limited to' });
    });
  });

  describe('s3', () => {
    let server: S3TestServer;
    let admin: S3Client;
    const bucket = 'shares';
    let n = 0;
    let prefix: string;
    const config = (extra: Record<string, unknown> = {}) => ({ bucket, prefix, region: server.region, endpoint: server.endpoint, forcePathStyle: true, ...extra });
    const secrets = () => ({ accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey });
    const keys = async () => ((await admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }))).Contents ?? []).map((o) => o.Key).sort();
    const text = async (key: string) => (await admin.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();

    beforeAll(async () => {
      server = await startS3Server();
      admin = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
      await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    });
    afterAll(async () => {
      admin?.destroy();
      await server?.stop();
    });
    beforeEach(() => {
      n += 1;
      prefix = `daily/${n}`;
    });

    it('puts the file under the prefix', async () => {
      const result = await send(s3Sender, context(config({ prefix: `/${prefix}/` }), secrets()), message([memoryFile('sales.pdf', '%PDF s3')]));
      expect(result).toEqual({ outcome: 'delivered', remoteRef: `${bucket}/${prefix}/sales.pdf` });
      expect(await text(`${prefix}/sales.pdf`)).toBe('%PDF s3');
      expect(s3Sender.targets(config())).toEqual([{ key: 'default', masked: `${bucket}/${prefix}` }]);
    });

    it('conflict unique writes name-1, overwrite replaces, fail is permanent and keeps the original', async () => {
      const ctx = (conflict: string) => context(config({ conflict }), secrets());
      expect((await send(s3Sender, ctx('unique'), message([memoryFile('r.pdf', 'first')]))).outcome).toBe('delivered');
      expect(await send(s3Sender, ctx('unique'), message([memoryFile('r.pdf', 'second')]))).toMatchObject({ outcome: 'delivered', remoteRef: `${bucket}/${prefix}/r-1.pdf` });
      expect(await send(s3Sender, ctx('overwrite'), message([memoryFile('r.pdf', 'third')]))).toMatchObject({ outcome: 'delivered' });
      expect(await text(`${prefix}/r.pdf`)).toBe('third');
      expect(await send(s3Sender, ctx('fail'), message([memoryFile('r.pdf', 'fourth')]))).toEqual({ outcome: 'permanent', error: 'File exists: r.pdf' });
      expect(await text(`${prefix}/r.pdf`)).toBe('third');
      expect(await keys()).toEqual([`${prefix}/r-1.pdf`, `${prefix}/r.pdf`]);
    });

    it('a name taken between the check and the upload is not overwritten (If-None-Match): fail is permanent; unique steps past taken names', async () => {
      // The file's stream opens only after the HEAD said the name was free: another writer takes it right then.
      const racing = (text: string) => ({
        ...memoryFile('late.pdf', text),
        open: async () => {
          await admin.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/late.pdf`, Body: 'other' }));
          return Readable.from([Buffer.from(text)]);
        },
      });
      expect(await send(s3Sender, context(config({ conflict: 'fail' }), secrets()), message([racing('mine')]))).toEqual({ outcome: 'permanent', error: 'File exists: late.pdf' });
      expect(await text(`${prefix}/late.pdf`)).toBe('other');
      expect(await send(s3Sender, context(config({ conflict: 'unique' }), secrets()), message([racing('mine')]))).toMatchObject({ outcome: 'delivered', remoteRef: `${bucket}/${prefix}/late-1.pdf` });
      expect(await text(`${prefix}/late.pdf`)).toBe('other');
    });

    it('test() puts and deletes its object; wrong keys are permanent', async () => {
      expect(await s3Sender.test({ ...context(config(), secrets()), channelShortId: 'CH1' })).toEqual({ ok: true, details: { key: `${prefix}/formwork-test-CH1.txt` } });
      expect(await keys()).toEqual([]);
      const wrong = await send(s3Sender, context(config(), { accessKeyId: server.accessKeyId, secretAccessKey: 'wrong' }), message([memoryFile('r.pdf', 'x')]));
      expect(wrong).toMatchObject({ outcome: 'permanent', statusCode: 403 });
      const missing = await s3Sender.test({ ...context(config(), {}), channelShortId: 'CH1' });
      expect(missing).toEqual({ ok: false, error: 'Channel configuration invalid: the access key id and secret are both needed', details: { key: `${prefix}/formwork-test-CH1.txt` } });
    });

    it('hostile: the guard refuses 127.0.0.1 and localhost; .. in the prefix is refused; names cannot climb out', async () => {
      for (const endpoint of [server.endpoint, server.endpoint.replace('127.0.0.1', 'localhost')]) {
        const result = await send(s3Sender, context(config({ endpoint }), secrets(), strictGuard), message([memoryFile('r.pdf', 'x')]));
        expect(result.outcome).toBe('permanent');
        expect(result.error).toMatch(/not allowed/);
      }
      expect(await send(s3Sender, context(config({ prefix: 'a/../..' }), secrets()), message([memoryFile('r.pdf', 'x')]))).toEqual({
        outcome: 'permanent',
        error: "Channel configuration invalid: prefix must not contain '..'",
      });
      expect(await send(s3Sender, context(config(), secrets()), message([memoryFile('../../../r.pdf', 'x')]))).toMatchObject({ remoteRef: `${bucket}/${prefix}/r.pdf` });
      expect(await keys()).toEqual([`${prefix}/r.pdf`]);
    });

    it('hostile: an endpoint name that resolves to a private address is refused; the SDK connects to the address the guard checked', async () => {
      const named = config({ endpoint: server.endpoint.replace('127.0.0.1', 's3.share.test') });
      expect(await send(s3Sender, context(named, secrets(), namedStrict), message([memoryFile('r.pdf', 'x')]))).toMatchObject({ outcome: 'permanent', error: expect.stringMatching(/not allowed/) });
      expect(await keys()).toEqual([]);
      expect(await send(s3Sender, context(named, secrets(), namedLocal), message([memoryFile('r.pdf', 'x')]))).toEqual({ outcome: 'delivered', remoteRef: `${bucket}/${prefix}/r.pdf` });
    });

    it('hostile: an endpoint answering an endless error body is cut at 1 MB, not read to the end', async () => {
      let sent = 0;
      const endless = createServer((req, res) => {
        res.writeHead(500, { 'content-type': 'application/xml' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && sent < 1024 ** 3 && res.write(chunk)) sent += chunk.length;
        };
        res.on('drain', pump);
        pump();
      });
      endless.listen(0, '127.0.0.1');
      await once(endless, 'listening');
      try {
        const endpoint = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
        const started = Date.now();
        const result = await send(s3Sender, context(config({ endpoint, conflict: 'overwrite' }), secrets()), message([memoryFile('r.pdf', 'x')]));
        expect(result).toEqual({ outcome: 'permanent', error: 'The S3 server answered with more than 1 MB' });
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(sent).toBeLessThan(64 * 1024 ** 2);
      } finally {
        endless.closeAllConnections();
        endless.close();
      }
    });

    it('a server that is down is retried', async () => {
      const result = await send(s3Sender, context(config({ endpoint: `http://127.0.0.1:${await freePort()}` }), secrets()), message([memoryFile('r.pdf', 'x')]));
      expect(result).toEqual({ outcome: 'retry', error: 'Connection refused' });
    });
  });
});
