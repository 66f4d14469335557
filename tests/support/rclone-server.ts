import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/free-port';
import { waitFor } from './wait';

/**
 * Real SFTP and WebDAV servers for the file-share channel tests: Debian's `rclone serve sftp|webdav`
 * (apt `rclone`; the host key from `ssh-keygen`, apt `openssh-client`) on a temporary directory, a
 * free port and a random user and password. `rootDir` is the share: a test reads what arrived there.
 */

export interface RcloneServer {
  host: string;
  port: number;
  /** http://127.0.0.1:<port>/ for WebDAV. */
  url: string;
  username: string;
  password: string;
  rootDir: string;
  /** SFTP only: the host key's SHA-256 fingerprint, as `ssh-keygen -l -E sha256` prints it after `SHA256:`. */
  hostKeySha256: string;
  /** SFTP only: an OpenSSH private key (encrypted with `clientKeyPassphrase`) the server accepts for `username`. */
  clientKey: string;
  clientKeyPassphrase: string;
  /** Stops the server (the port then refuses connections); the directory stays until `remove`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  remove(): Promise<void>;
}

const run = promisify(execFile);
const RCLONE = process.env.RCLONE_PATH ?? 'rclone';

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startRcloneServer(protocol: 'sftp' | 'webdav'): Promise<RcloneServer> {
  const work = await mkdtemp(join(tmpdir(), `formwork-${protocol}-`));
  const rootDir = join(work, 'share');
  await mkdir(rootDir);
  const username = 'formwork';
  const password = randomBytes(12).toString('hex');
  const port = await freePort();
  const args = ['serve', protocol, rootDir, '--addr', `127.0.0.1:${port}`, '--user', username, '--pass', password, '--config', '/dev/null', '--dir-cache-time', '1ms', '--poll-interval', '0'];
  // Directory listings are not cached: a test prepares folders in rootDir directly and the server sees them at once.
  let hostKeySha256 = '';
  let clientKey = '';
  const clientKeyPassphrase = randomBytes(8).toString('hex');
  if (protocol === 'sftp') {
    const key = join(work, 'host_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const { stdout } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${key}.pub`]);
    hostKeySha256 = /SHA256:([A-Za-z0-9+/]+)/.exec(stdout)?.[1] ?? '';
    // The password, or this one client key (never the machine's ~/.ssh/authorized_keys).
    const client = join(work, 'client_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', clientKeyPassphrase, '-f', client]);
    clientKey = await readFile(client, 'utf8');
    args.push('--key', key, '--authorized-keys', `${client}.pub`);
  }

  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    const proc = spawn(RCLONE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    try {
      await waitFor(() => proc.exitCode === null && portOpen(port), { timeoutMs: 20_000, what: `rclone serve ${protocol}` });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- rclone output ---\n${output}`);
    }
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const killTimer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killTimer);
  };
  const remove = async () => {
    await stop();
    await rm(work, { recursive: true, force: true });
  };
  try {
    await start();
  } catch (err) {
    await remove();
    throw err;
  }
  return { host: '127.0.0.1', port, url: `http://127.0.0.1:${port}/`, username, password, rootDir, hostKeySha256, clientKey, clientKeyPassphrase, stop, start, remove };
}

/** A file of the share as text, or undefined when it is not there. */
export async function readShared(rootDir: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(join(rootDir, path), 'utf8');
  } catch {
    return undefined;
  }
}
