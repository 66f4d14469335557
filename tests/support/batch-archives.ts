import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Reading a batch archive back with the machine's tools: `unzip` for a ZIP, `qpdf` for a merged PDF's bookmarks. */

const run = promisify(execFile);

async function inTempFile<T>(bytes: Buffer, name: string, fn: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'formwork-archive-'));
  const path = join(dir, name);
  try {
    await writeFile(path, bytes);
    return await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A ZIP as `unzip` reads it: its entries' names in order (after `unzip -t` found every entry's CRC right), and each entry's bytes. */
export function unzipAll(zip: Buffer): Promise<Array<{ name: string; body: Buffer }>> {
  return inTempFile(zip, 'archive.zip', async (path) => {
    const test = await run('/usr/bin/unzip', ['-t', path], { maxBuffer: 16 * 1024 * 1024 });
    if (!/No errors detected/.test(test.stdout)) throw new Error(`unzip -t: ${test.stdout}`);
    const { stdout } = await run('/usr/bin/unzip', ['-Z1', path], { maxBuffer: 16 * 1024 * 1024 });
    const names = stdout.split('\n').filter(Boolean);
    const out = join(path, '..', 'out');
    await run('/usr/bin/unzip', ['-qq', '-d', out, path], { maxBuffer: 16 * 1024 * 1024 });
    const entries: Array<{ name: string; body: Buffer }> = [];
    for (const name of names) entries.push({ name, body: await readFile(join(out, name)) });
    return entries;
  });
}

/** The merged PDF's top-level bookmarks as qpdf lists them (`--json-key=outlines`): title and the page each opens (0-based). */
export function pdfOutline(pdf: Buffer): Promise<Array<{ title: string; page: number }>> {
  return inTempFile(pdf, 'merged.pdf', async (path) => {
    const { stdout } = await run('/usr/bin/qpdf', ['--json', '--json-key=outlines', path], { maxBuffer: 64 * 1024 * 1024 });
    const outlines = (JSON.parse(stdout) as { outlines: Array<{ title: string; destpageposfrom1: number }> }).outlines;
    return outlines.map((o) => ({ title: o.title, page: o.destpageposfrom1 - 1 }));
  });
}
