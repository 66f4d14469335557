import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EncryptionOptions } from '../../../domain/documents/output';
import { qpdfEncryptionJob } from './encryption-job';
import { runTool, toolFailure, TOOL_CPU_SECONDS, TOOL_MEMORY_BYTES } from './run-tool';

/**
 * AES-256 encryption (output.encryption; docs/documents.md "Encryption"), run in a PDF tools worker
 * process on files in the call's private folder `dir`.
 *
 * The work is qpdf's (the Debian package): PDF 2.0 / ISO 32000-2 security handler revision 6
 * (AESv3, what qpdf calls 256-bit), the one encryption the current standard does not deprecate.
 * Why not an npm library: pdf-lib (the project's) does not encrypt; @cantoo/pdf-lib, a fork that
 * does, would be a second copy of pdf-lib beside the project's, kept by one company, and would
 * rewrite the whole document in the worker's heap; the small encrypting packages do RC4
 * (@pdfsmaller/pdf-encrypt-lite) or are barely used; muhammara is a native addon with an install
 * script and does not write AES-256; node-qpdf2
 * wraps this same qpdf but puts the passwords on its command line. qpdf is the reference
 * implementation readers are tested against, streams the file, and its limits are the kernel's.
 *
 * The passwords never reach a command line (where `ps` shows them) nor a log: qpdf reads its whole
 * job from a JSON file (`--job-json-file`) written with mode 600 in the call's folder (itself 700)
 * and removed as soon as qpdf has run; JSON keeps any character of a password as it is (an
 * `@file` of arguments would cut one at a newline). A failure's message has the passwords scrubbed.
 */

export async function encryptPdf(pdf: Buffer, options: EncryptionOptions, dir: string): Promise<Buffer> {
  const input = join(dir, 'encrypt-in.pdf');
  const output = join(dir, 'encrypt-out.pdf');
  const job = join(dir, 'encrypt-job.json');
  await writeFile(input, pdf, { mode: 0o600 });
  // `wx`: a file left in the folder by something else is never reused.
  await writeFile(job, JSON.stringify(qpdfEncryptionJob(options, input, output)), { mode: 0o600, flag: 'wx' });
  let run;
  try {
    // The encrypted file is about as large as the input: anything far larger is not encryption.
    run = await runTool('qpdf', [`--job-json-file=${job}`], { cwd: dir, memoryBytes: TOOL_MEMORY_BYTES, cpuSeconds: TOOL_CPU_SECONDS, fileBytes: 2 * pdf.length + 1024 * 1024 });
  } finally {
    await rm(job, { force: true });
  }
  // 3: qpdf finished with warnings (a damaged input it could repair); the file is written.
  if (run.code !== 0 && run.code !== 3) throw toolFailure('qpdf', run, scrubber(options));
  const encrypted = await readFile(output);
  await rm(input, { force: true });
  await rm(output, { force: true });
  return encrypted;
}

/** Removes the passwords from a tool's message (it should never print them; this makes sure). */
function scrubber(options: EncryptionOptions): (s: string) => string {
  const secrets = [options.ownerPassword, options.userPassword].filter((s): s is string => !!s && s.length > 0);
  return (s) => secrets.reduce((text, secret) => text.split(secret).join('***'), s);
}
