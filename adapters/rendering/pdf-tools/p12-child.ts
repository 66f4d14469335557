import { spawn } from 'node:child_process';
import { AppError } from '../../../domain/errors';
import { threadFile } from '../../threads';
import { openP12, refuseP12, type CertificateInfo } from './p12';

/**
 * openP12 (p12.ts) for an upload, in a child process of its own: the API never derives a PKCS#12
 * file's keys on the thread that serves HTTP. This file is both the caller's side
 * (describeP12InChild) and the child's (run as a script).
 */

const CHILD_TIMEOUT_MS = 15_000;
const CHILD_HEAP_MB = 128;
const CHILD_ANSWER_MAX = 64 * 1024;

/**
 * openP12 in a child process of its own (heap CHILD_HEAP_MB, killed after CHILD_TIMEOUT_MS): the
 * API checks an upload with it. The file and password go through the child's stdin, never its
 * arguments or environment. Answers what the certificate says of itself, or the catalogued refusal.
 */
export async function describeP12InChild(p12: Buffer, password: string): Promise<CertificateInfo> {
  const child = spawn(process.execPath, [`--max-old-space-size=${CHILD_HEAP_MB}`, threadFile('rendering/pdf-tools/p12-child')], { stdio: ['pipe', 'pipe', 'ignore'], timeout: CHILD_TIMEOUT_MS });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    if (out.length > CHILD_ANSWER_MAX) child.kill('SIGKILL');
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(JSON.stringify({ p12: p12.toString('base64'), password }));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, s) => resolve([c, s]));
  });
  let answer: { ok: true; info: CertificateInfo } | { ok: false; message: string; relatedInfo: Record<string, unknown> } | undefined;
  try {
    answer = JSON.parse(out);
  } catch {
    answer = undefined;
  }
  if (!answer || code !== 0) {
    throw refuseP12('too_costly', `Reading the PKCS#12 file needed more time or memory than allowed${signal ? ` (${signal})` : ''}`);
  }
  if (!answer.ok) throw new AppError('ERR_SIGN_002', answer.message, answer.relatedInfo);
  return answer.info;
}

/** The child's side of describeP12InChild: `{p12, password}` on stdin, the answer on stdout. */
async function childMain(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let reply: unknown;
  try {
    const { p12, password } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { p12: string; password: string };
    reply = { ok: true, info: openP12(Buffer.from(p12, 'base64'), password).info };
  } catch (e) {
    reply = e instanceof AppError ? { ok: false, message: e.message, relatedInfo: e.relatedInfo ?? {} } : { ok: false, message: 'The PKCS#12 file cannot be read', relatedInfo: { reason: 'malformed' } };
  }
  process.stdout.write(JSON.stringify(reply), () => process.exit(0));
}

if (require.main === module) void childMain();
