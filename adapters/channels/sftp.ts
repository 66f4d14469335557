import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Client, type ConnectConfig, type SFTPWrapper } from 'ssh2';
import type { ChannelContext, ChannelSender } from './channel-sender';
import {
  configSecret,
  configText,
  failedTest,
  failureResult,
  guardFailure,
  networkFailure,
  pathSegments,
  permanent,
  retry,
  shareSettings,
  shareTarget,
  ShareError,
  TEST_FILE_TEXT,
  testFileName,
  writeAll,
  type ShareWriter,
} from './file-share';

/**
 * `sftp` channels (docs/reporting.md "File shares", "Channels", "Host keys and TLS"): ssh2 (pure JS; its
 * optional native build stays off) to the address the outbound guard checked, the server's host key
 * compared with the pinned SHA-256 fingerprint before anything is sent (a mismatch ends the
 * handshake: no password or key leaves, no file is written), each file uploaded as `name.part` and
 * renamed, so a reader never sees half a report.
 */

interface SftpChannelConfig {
  host: string;
  port: number;
  username: string;
  /** `/a/b`, `a/b` (below the login directory), or empty (the login directory). */
  directory: string;
  /** Base64 SHA-256 of the raw host key, without `SHA256:` or `=` padding. */
  hostKeySha256: string;
}

const READY_TIMEOUT_MS = 10_000;
const KEEPALIVE_MS = 5_000;
const HOST = /^[A-Za-z0-9.:[\]_-]{1,253}$/;
const FINGERPRINT = /^[A-Za-z0-9+/]{43}$/;

/** `SHA256:abc…=` or `abc…` → `abc…` (ssh-keygen prints base64 without padding after `SHA256:`). */
function normaliseFingerprint(value: string): string {
  return value.trim().replace(/^SHA256:/i, '').replace(/=+$/, '');
}

const fingerprintOf = (key: Buffer) => createHash('sha256').update(key).digest('base64').replace(/=+$/, '');

function readConfig(config: Record<string, unknown>): SftpChannelConfig {
  const host = configText(config, 'host', { max: 253 })!;
  if (!HOST.test(host)) throw permanent('Channel configuration invalid: host is not a host name or address');
  const port = config.port ?? 22;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) throw permanent('Channel configuration invalid: port must be 1-65535');
  const username = configText(config, 'username', { max: 200 })!;
  const dirText = configText(config, 'directory', { optional: true }) ?? '';
  const segments = pathSegments(dirText, 'directory');
  const directory = dirText.startsWith('/') ? `/${segments.join('/')}` : segments.join('/');
  const hostKeySha256 = normaliseFingerprint(configText(config, 'hostKeySha256', { max: 80 })!);
  if (!FINGERPRINT.test(hostKeySha256)) throw permanent('Channel configuration invalid: hostKeySha256 is not a SHA-256 fingerprint');
  return { host, port, username, directory, hostKeySha256 };
}

const remotePath = (config: SftpChannelConfig, name: string) =>
  config.directory === '' ? name : config.directory === '/' ? `/${name}` : `${config.directory}/${name}`;

interface Session {
  sftp: SFTPWrapper;
  close(): void;
}

/** What a connection attempt saw, also when it failed (test() reports the observed key). */
interface Handshake {
  observedHostKeySha256?: string;
  mismatch: boolean;
}

async function connect(ctx: ChannelContext, config: SftpChannelConfig, seen: Handshake): Promise<Session> {
  const password = configSecret(ctx.secrets, 'password');
  const privateKey = configSecret(ctx.secrets, 'privateKey');
  if (!password && !privateKey) throw permanent('Channel configuration invalid: a password or a private key is needed');
  const address = await ctx.guard.resolveTcp(config.host);
  const client = new Client();
  const options: ConnectConfig = {
    host: address,
    port: config.port,
    username: config.username,
    readyTimeout: READY_TIMEOUT_MS,
    keepaliveInterval: KEEPALIVE_MS,
    keepaliveCountMax: 3,
    ...(privateKey ? { privateKey, passphrase: configSecret(ctx.secrets, 'passphrase') } : {}),
    ...(password ? { password } : {}),
    hostVerifier: (key: Buffer) => {
      seen.observedHostKeySha256 = fingerprintOf(key);
      seen.mismatch = seen.observedHostKeySha256 !== config.hostKeySha256;
      return !seen.mismatch;
    },
  };
  return new Promise<Session>((resolve, reject) => {
    const onAbort = () => {
      client.end();
      // A deadline (the channel test's AbortSignal.timeout) is the server's slowness, not a cancellation.
      const late = (ctx.signal?.reason as Error | undefined)?.name === 'TimeoutError';
      reject(retry(late ? 'The SFTP server did not answer in time' : 'The upload was cancelled'));
    };
    const close = () => {
      ctx.signal?.removeEventListener('abort', onAbort);
      client.end();
    };
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    // Kept for the whole session: an 'error' event without a listener would end the process; after
    // `ready`, the pending SFTP calls fail with their own errors.
    client.on('error', (err) => {
      close();
      reject(sshFailure(err, seen));
    });
    client.once('ready', () => {
      client.sftp((err, sftp) => {
        if (err) {
          close();
          reject(permanent('The SSH server offers no SFTP subsystem'));
        } else resolve({ sftp, close });
      });
    });
    try {
      client.connect(options);
    } catch {
      // ssh2 throws at once for a key it cannot parse (or decrypt with the passphrase).
      close();
      reject(permanent('The private key could not be read (wrong format or passphrase)'));
    }
  });
}

/** A connection or protocol error as our outcome and words. */
function sshFailure(err: unknown, seen?: Handshake): ShareError {
  if (err instanceof ShareError) return err;
  if (seen?.mismatch) return permanent(`SFTP host key does not match the pinned one (the server showed SHA256:${seen.observedHostKeySha256})`);
  const guard = guardFailure(err);
  if (guard) return guard;
  const { level, code, message } = err as { level?: string; code?: unknown; message?: string };
  if (level === 'client-authentication') return permanent('The SFTP server refused the credentials');
  // SFTP status codes (draft-ietf-secsh-filexfer-02): 2 no such file, 3 permission denied, 4 failure.
  if (code === NO_SUCH_FILE) return permanent('SFTP directory or file not found');
  if (code === 3) return permanent('The SFTP server denied permission');
  if (code === 4) return permanent('The SFTP server refused the operation');
  if (level === 'client-timeout' || /timed out/i.test(message ?? '')) return retry('The SFTP server did not answer in time');
  return networkFailure(err) ?? retry('The SFTP connection failed');
}

const call = <T>(fn: (cb: (err: Error | null | undefined, value?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(sshFailure(err)) : resolve(value as T))));

/** SSH_FX_NO_SUCH_FILE */
const NO_SUCH_FILE = 2;

function exists(sftp: SFTPWrapper, path: string): Promise<boolean> {
  return new Promise((resolve, reject) =>
    sftp.stat(path, (err) => {
      if (!err) resolve(true);
      else if ((err as { code?: unknown }).code === NO_SUCH_FILE) resolve(false);
      else reject(sshFailure(err));
    }),
  );
}

const removeQuietly = (sftp: SFTPWrapper, path: string) => call((cb) => sftp.unlink(path, cb)).catch(() => undefined);

function writer(sftp: SFTPWrapper, config: SftpChannelConfig): ShareWriter {
  return {
    exists: (name) => exists(sftp, remotePath(config, name)),
    async write(name, file, overwrite) {
      const target = remotePath(config, name);
      const part = `${target}.part`;
      try {
        await pipeline(await file.open(), sftp.createWriteStream(part, { flags: 'w' }));
      } catch (err) {
        await removeQuietly(sftp, part);
        throw sshFailure(err);
      }
      try {
        if (overwrite) {
          // posix-rename replaces atomically; plain SFTP rename refuses an existing target on some servers.
          try {
            await call((cb) => sftp.ext_openssh_rename(part, target, cb));
          } catch {
            if (await exists(sftp, target)) await call((cb) => sftp.unlink(target, cb));
            await call((cb) => sftp.rename(part, target, cb));
          }
          return 'written';
        }
        if (await exists(sftp, target)) {
          await removeQuietly(sftp, part);
          return 'exists';
        }
        await call((cb) => sftp.rename(part, target, cb));
        return 'written';
      } catch (err) {
        await removeQuietly(sftp, part);
        // Someone wrote the name between the check and the rename.
        if (!overwrite && (await exists(sftp, target).catch(() => false))) return 'exists';
        throw err;
      }
    },
  };
}

export const sftpSender: ChannelSender = {
  kind: 'sftp',
  targets(config) {
    const host = typeof config.host === 'string' ? config.host : '';
    const dir = typeof config.directory === 'string' ? config.directory : '';
    return shareTarget(`${host}${dir.startsWith('/') ? '' : '/'}${dir}`);
  },

  async send(ctx, _target, message) {
    let session: Session | undefined;
    const seen: Handshake = { mismatch: false };
    try {
      const config = readConfig(ctx.config);
      const settings = shareSettings(ctx.config);
      session = await connect(ctx, config, seen);
      return await writeAll(writer(session.sftp, config), message, settings, (name) => `${config.host}:${remotePath(config, name)}`);
    } catch (err) {
      return failureResult(sshFailure(err, seen), 'SFTP upload');
    } finally {
      session?.close();
    }
  },

  async test(ctx) {
    let session: Session | undefined;
    const seen: Handshake = { mismatch: false };
    const details = () => (seen.observedHostKeySha256 ? { observedHostKeySha256: `SHA256:${seen.observedHostKeySha256}` } : undefined);
    try {
      const config = readConfig(ctx.config);
      session = await connect(ctx, config, seen);
      const { sftp } = session;
      const path = remotePath(config, testFileName(ctx.channelShortId));
      await call((cb) => sftp.writeFile(path, TEST_FILE_TEXT, cb));
      await call((cb) => sftp.unlink(path, cb));
      return { ok: true, details: details() };
    } catch (err) {
      return failedTest(sshFailure(err, seen), 'SFTP test', details());
    } finally {
      session?.close();
    }
  },
};
