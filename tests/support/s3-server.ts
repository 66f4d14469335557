import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../../scripts/free-port';
import { tmpdir } from 'node:os';
import { TOOLS_DIR } from '../../scripts/temporal-cli';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export interface S3TestServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The posix root: each bucket is a directory below it. */
  rootDir: string;
  stop(): Promise<void>;
}

const REGION = 'us-east-1';

export function versitygwPath(): string {
  return process.env.VERSITYGW_PATH ?? join(TOOLS_DIR, 'versitygw');
}

/** A port that was free a moment ago (the gateway takes a port number, not a listening socket). */

/**
 * Starts a real S3-compatible server (Versity gateway, posix backend) on a temporary directory
 * with random root credentials. It verifies SigV4 signatures and presigned URLs like S3 does.
 */
export async function startS3Server(options: { startTimeoutMs?: number } = {}): Promise<S3TestServer> {
  const rootDir = await mkdtemp(join(tmpdir(), 'formwork-s3-'));
  const accessKeyId = `AK${randomBytes(9).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(30).toString('base64url');
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;

  const child = spawn(
    versitygwPath(),
    ['--access', accessKeyId, '--secret', secretAccessKey, '--region', REGION, '--port', `127.0.0.1:${port}`, '--quiet', 'posix', rootDir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => {
      output += String(err);
      resolve(-1);
    });
  });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killTimer);
    }
    await rm(rootDir, { recursive: true, force: true });
  };

  try {
    await waitUntilAnswering(endpoint, child, exited, options.startTimeoutMs ?? 20_000);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- versitygw output ---\n${output}`);
  }
  return { endpoint, accessKeyId, secretAccessKey, region: REGION, rootDir, stop };
}

async function waitUntilAnswering(
  endpoint: string,
  child: ChildProcess,
  exited: Promise<number | null>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (Date.now() < deadline) {
    if (gone) throw new Error(`versitygw exited early with code ${child.exitCode}`);
    try {
      // Any HTTP answer (an unsigned request gets 403) means the gateway is serving.
      await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await delay(50); // poll interval while the port is not yet bound
    }
  }
  throw new Error(`versitygw did not answer on ${endpoint} within ${timeoutMs} ms`);
}
