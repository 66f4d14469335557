import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import ExcelJS from 'exceljs';
import { LocalStorage } from '../adapters/storage/local-storage';
import { storedRowSource } from '../activities/reporting/render-report.activity';
import { storedRows } from '../activities/reporting/stored-rows';
import { streamExcelDocument } from '../adapters/rendering/render-document';
import { ExcelThreads } from '../adapters/rendering/excel-threads';
import type { Evaluator } from '../domain/evaluation';
import type { TemplateDefinition } from '../domain/templates/template.types';

/**
 * Excel memory benchmark (issue 17, goal 4b): the same N rows (default 100,000), stored as a
 * report's query result is (gzip NDJSON in local storage), written to an .xlsx file two ways, each
 * in its own child process whose peak RSS is measured:
 *   - baseline: ExcelJS's in-memory writer (`new ExcelJS.Workbook()`, a table of the rows,
 *     `writeBuffer`), the rows read into an array first, as report outputs were written before;
 *   - Formwork: the report path as it is now (streamExcelDocument on an Excel thread, rows read
 *     from storage a batch at a time, the workbook streamed into storage as it is made).
 * Goal: Formwork's peak RSS ≤ 1/3 of the baseline's.
 *
 *   npm run bench:excel-memory [-- --n 100000]
 */

const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const N = Number(arg('--n')) || 100_000;
const COLUMNS = [
  { name: 'id', dataType: 'int4' },
  { name: 'label', dataType: 'text' },
  { name: 'amount', dataType: 'numeric' },
];
const RESULT_KEY = 'reporting/bench/runs/r/datasets/items.ndjson.gz';
const OUTPUT_KEY = 'reporting/bench/runs/r/outputs/items.xlsx';
const MAX_BYTES = 1024 * 1024 * 1024;

const TEMPLATE = {
  schema: {
    pageSize: 'A4',
    sections: [
      {
        id: 'main',
        components: [{ id: 't', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Id', field: 'id' }, { header: 'Item', field: 'label' }, { header: 'Amount', field: 'amount', format: 'number' }] } }],
      },
    ],
  },
  variables: [{ name: 'items', type: 'array', required: true, items: { type: 'object', properties: [{ name: 'id', type: 'number' }, { name: 'label', type: 'string' }, { name: 'amount', type: 'number' }] } }],
} as unknown as TemplateDefinition;

const storageAt = (rootDir: string) => new LocalStorage({ rootDir, publicUrl: 'http://127.0.0.1', signingSecret: 'bench' });

/** Peak resident set size of this process so far, in MB (Linux reports kilobytes). */
const peakMb = () => process.resourceUsage().maxRSS / 1024;

async function writeResult(storage: LocalStorage): Promise<void> {
  function* lines() {
    for (let i = 1; i <= N; i++) yield `${JSON.stringify({ id: i, label: `Item ${i}`, amount: ((i % 1000) + 0.25).toFixed(2) })}\n`;
  }
  await storage.put(RESULT_KEY, Readable.from(lines()).pipe(createGzip()), 'application/gzip');
}

/** Baseline child: the rows held, then ExcelJS's in-memory workbook. */
async function inMemory(storage: LocalStorage): Promise<number> {
  const rows: unknown[][] = [];
  for await (const r of storedRows(storage, RESULT_KEY, { maxBytes: MAX_BYTES })) rows.push([r.id, r.label, Number(r.amount)]);
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('main');
  sheet.addTable({ name: 'T_t', ref: 'A1', headerRow: true, style: { theme: 'TableStyleMedium2', showRowStripes: true }, columns: [{ name: 'Id' }, { name: 'Item' }, { name: 'Amount' }], rows });
  const body = Buffer.from(await workbook.xlsx.writeBuffer());
  await storage.put(OUTPUT_KEY, body, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  return body.length;
}

/** Formwork child: the streaming report path. */
async function streaming(storage: LocalStorage): Promise<number> {
  const threads = new ExcelThreads({ size: 1 });
  const noEvaluator = {} as Evaluator; // the template calculates nothing
  const out = new PassThrough();
  const stored = storage.put(OUTPUT_KEY, out, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  const { bytes } = await streamExcelDocument(
    { pdfRenderer: undefined as never, evaluator: noEvaluator, excelRenderer: threads, limits: { maxExcelRows: N + 10, maxLoopIterations: N + 10 } },
    { tenant: 'bench', template: TEMPLATE, variables: { items: [] }, sources: { items: storedRowSource(storage, { key: RESULT_KEY, columns: COLUMNS }, TEMPLATE.variables![0], MAX_BYTES) } },
    async (chunk) => {
      if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
    },
  );
  out.end();
  await stored;
  await threads.close();
  return bytes;
}

async function child(mode: string, dir: string): Promise<void> {
  const storage = storageAt(dir);
  const started = Date.now();
  const bytes = mode === 'memory' ? await inMemory(storage) : await streaming(storage);
  // The file must be a workbook of every row (checked outside the measured part: a streamed re-read).
  const reader = new ExcelJS.stream.xlsx.WorkbookReader((await storage.get(OUTPUT_KEY)).body, {});
  let rows = 0;
  const peak = peakMb();
  const seconds = (Date.now() - started) / 1000;
  for await (const sheet of reader) {
    for await (const row of sheet) rows += row ? 1 : 0;
  }
  process.stdout.write(JSON.stringify({ peakMb: peak, seconds, bytes, rows }));
}

function runChild(mode: string, dir: string): { peakMb: number; seconds: number; bytes: number; rows: number } {
  const out = execFileSync(process.execPath, [__filename, '--child', mode, '--dir', dir, '--n', String(N)], { encoding: 'utf8', maxBuffer: 1024 * 1024 });
  return JSON.parse(out);
}

async function main(): Promise<void> {
  const mode = arg('--child');
  if (mode) return child(mode, arg('--dir')!);
  const dir = await mkdtemp(join(tmpdir(), `formwork-excel-mem-${randomBytes(3).toString('hex')}-`));
  try {
    await writeResult(storageAt(dir));
    const memory = runChild('memory', dir);
    const stream = runChild('stream', dir);
    for (const r of [memory, stream]) if (r.rows !== N + 1) throw new Error(`a workbook has ${r.rows} rows, expected ${N + 1}`);
    const ratio = stream.peakMb / memory.peakMb;
    console.log(`bench:excel-memory  ${N} rows × 3 columns from a stored gzip NDJSON result to a stored .xlsx, each writer in its own process`);
    console.log(`  ExcelJS in-memory writer (baseline): peak RSS ${memory.peakMb.toFixed(0)} MB, ${memory.seconds.toFixed(2)} s, file ${(memory.bytes / 1024 / 1024).toFixed(1)} MB`);
    console.log(`  Formwork streaming report path    : peak RSS ${stream.peakMb.toFixed(0)} MB, ${stream.seconds.toFixed(2)} s, file ${(stream.bytes / 1024 / 1024).toFixed(1)} MB`);
    console.log(`  ratio ${ratio.toFixed(2)} of the baseline's peak (goal ≤ 0.33): ${ratio <= 1 / 3 ? 'met' : 'NOT met'}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
