import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import yauzl from 'yauzl';

/**
 * Reading finished outputs back with real tools: encrypted PDFs with qpdf and pdftotext (with and
 * without a password), PNG files (decoded, and their pHYs resolution), ZIP archives (entries).
 */

interface ToolAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool on the PDF (written to a fresh folder): its exit code and what it printed, never a throw. */
export async function onPdf(pdf: Buffer, command: string, args: (path: string) => string[]): Promise<ToolAnswer> {
  const dir = await mkdtemp(join(tmpdir(), 'formwork-out-'));
  const path = join(dir, 'doc.pdf');
  try {
    await writeFile(path, pdf);
    return await new Promise((resolve) => {
      execFile(command, args(path), { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `qpdf --show-encryption`, with a password when given. */
export const showEncryption = (pdf: Buffer, password?: string) =>
  onPdf(pdf, 'qpdf', (path) => [...(password === undefined ? [] : [`--password=${password}`]), '--show-encryption', path]);

/** `qpdf --requires-password`: 0 when a password is needed to open it, 2 when not encrypted, 3 when it opens without one. */
export const requiresPassword = async (pdf: Buffer) => (await onPdf(pdf, 'qpdf', (path) => ['--requires-password', path])).code;

/** The text as pdftotext reads it, with the user (`-upw`) or owner (`-opw`) password. */
export const textWith = (pdf: Buffer, password?: { user?: string; owner?: string }) =>
  onPdf(pdf, '/usr/bin/pdftotext', (path) => [...(password?.user ? ['-upw', password.user] : []), ...(password?.owner ? ['-opw', password.owner] : []), path, '-']);

export interface PngFile {
  width: number;
  height: number;
  /** The pHYs chunk's pixels per metre, when there is one (x, y). */
  pixelsPerMetre?: [number, number];
}

/**
 * A PNG's size and its pHYs chunk's resolution. Decoded in full by pngjs (a file that does not
 * decode throws) unless `headerOnly`: a 35-megapixel page takes seconds to decode, during which
 * this process serves nothing (the test app's API is in it).
 */
export function readPng(body: Buffer, { headerOnly = false } = {}): PngFile {
  expect(body.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  let width = 0;
  let height = 0;
  let pixelsPerMetre: [number, number] | undefined;
  // Chunks after the 8-byte signature: length, type, data, CRC.
  for (let at = 8; at + 8 <= body.length; ) {
    const length = body.readUInt32BE(at);
    const type = body.toString('latin1', at + 4, at + 8);
    if (type === 'IHDR') [width, height] = [body.readUInt32BE(at + 8), body.readUInt32BE(at + 12)];
    if (type === 'pHYs' && body[at + 16] === 1) pixelsPerMetre = [body.readUInt32BE(at + 8), body.readUInt32BE(at + 12)];
    at += 12 + length;
  }
  if (!headerOnly) {
    const png = PNG.sync.read(body);
    expect([png.width, png.height]).toEqual([width, height]);
  }
  return { width, height, pixelsPerMetre };
}

/** The dots per inch a pHYs chunk says (metres to inches). */
export const dpiOf = (pixelsPerMetre: number) => Math.round(pixelsPerMetre * 0.0254);

/** A ZIP's entries in order, with their contents. */
export function zipEntries(zip: Buffer): Promise<Array<{ name: string; body: Buffer }>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err ?? new Error('no zip'));
      const entries: Array<{ name: string; body: Buffer }> = [];
      file.on('error', reject);
      file.on('end', () => resolve(entries));
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({ name: entry.fileName, body: Buffer.concat(chunks) });
            file.readEntry();
          });
        });
      });
      file.readEntry();
    });
  });
}
