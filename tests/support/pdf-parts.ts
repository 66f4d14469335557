import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument, PDFHexString, PDFName, StandardFonts } from 'pdf-lib';
import type { TestApp } from './app';

/** PDFs to merge or append, made with pdf-lib, and what qpdf reads back of a merged one. */

const run = promisify(execFile);

/** A PDF of `pages` pages, each saying `<text> page <n>`; `labels` sets its page labels (e.g. `{ style: 'r' }`: i, ii, iii). */
export async function textPdf(text: string, pages: number, labels?: { style: string; prefix?: string }): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i += 1) doc.addPage([300, 400]).drawText(`${text} page ${i}`, { x: 20, y: 350, size: 14, font });
  if (labels) {
    const label = doc.context.obj({ S: PDFName.of(labels.style), ...(labels.prefix ? { P: PDFHexString.fromText(labels.prefix) } : {}) });
    doc.catalog.set(PDFName.of('PageLabels'), doc.context.obj({ Nums: [0, label] }));
  }
  return Buffer.from(await doc.save());
}

/** A PDF of `pages` empty pages (a 10,000-page one is about a megabyte). */
export async function blankPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i += 1) doc.addPage([100, 100]);
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}

/** `qpdf --json=2` of the PDF: its outlines (title, page from 1) and each page's label. */
export async function qpdfOutline(pdf: Buffer): Promise<{ outlines: Array<{ title: string; page: number }>; labels: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'formwork-qpdf-'));
  try {
    const path = join(dir, 'doc.pdf');
    await writeFile(path, pdf);
    const { stdout } = await run('qpdf', ['--json=2', '--json-key=outlines', '--json-key=pages', path], { maxBuffer: 256 * 1024 * 1024 });
    const json = JSON.parse(stdout) as { outlines: Array<{ title: string; destpageposfrom1: number }>; pages: Array<{ label: { '/P'?: string; '/S'?: string; '/St'?: number } | null }> };
    return { outlines: json.outlines.map((o) => ({ title: o.title, page: o.destpageposfrom1 })), labels: json.pages.map((p) => labelText(p.label)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A page label as a viewer shows it, from qpdf's label dictionary (its `/St` is this page's number). */
function labelText(label: { '/P'?: string; '/S'?: string; '/St'?: number } | null): string {
  if (!label) return '';
  const n = label['/St'] ?? 1;
  const roman = (v: number) => {
    const table: Array<[number, string]> = [[1000, 'm'], [900, 'cm'], [500, 'd'], [400, 'cd'], [100, 'c'], [90, 'xc'], [50, 'l'], [40, 'xl'], [10, 'x'], [9, 'ix'], [5, 'v'], [4, 'iv'], [1, 'i']];
    let out = '';
    for (const [value, digits] of table) while (v >= value) (out += digits), (v -= value);
    return out;
  };
  const style = label['/S'];
  const number = style === '/D' ? String(n) : style === '/r' ? roman(n) : style === '/R' ? roman(n).toUpperCase() : '';
  return `${(label['/P'] ?? '').replace(/^u:/, '')}${number}`;
}

/** POST /api/documents/merge as multipart: the request as JSON in `request`, the files in `files`. */
export async function postMerge(app: TestApp, token: string, request: unknown, files: Array<{ body: Buffer; name?: string }>): Promise<{ status: number; body: any; headers: Headers }> {
  const form = new FormData();
  form.append('request', JSON.stringify(request));
  for (const [i, f] of files.entries()) form.append('files', new Blob([new Uint8Array(f.body)], { type: 'application/pdf' }), f.name ?? `part-${i}.pdf`);
  const res = await fetch(`${app.url}/api/documents/merge`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
