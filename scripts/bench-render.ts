import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ChromiumPool } from '../adapters/rendering/chromium-pool';
import { countPdfPages, disposeBrowser, launchBrowser, preparePage, printPdf, TAGGED_PDF } from '../adapters/rendering/chromium-page';
import { buildHtml, type HtmlDocument } from '../domain/templates/build-html';
import { resolveVariables } from '../domain/templates/variables';
import type { TemplateDefinition } from '../domain/templates/template.types';
import { INVOICE } from './bench-invoice';
import { startJsreport } from './bench-render-peer';
import { benchOutputs } from './bench-render-outputs';
import { intArg as arg, median } from './bench-stats';

/**
 * Issue 17, goal 1, in one run at one concurrency: the same one-page invoice printed by
 *   - the warm pool (ChromiumPool, as the render worker uses it),
 *   - the same pool printing the shipped invoice example (docs/examples/invoice.json: columns,
 *     boxes, a theme, a condition, a barcode, a footer of components; issue 31 asks it within 1.5x),
 *   - the same pool printing a blank page: the limit, what any print costs,
 *   - jsreport on the same Chromium (the peer, scripts/bench-render-peer.ts),
 *   - a browser launched per document (the baseline).
 * The sides take turns in rounds, so load from elsewhere on the machine falls on all of them.
 * Prints each side's throughput and median latency and the three ratios against their goals.
 * Then issue 34's part (scripts/bench-render-outputs.ts, docs/performance.md "Output options"):
 * each `output` step's p50/p95 against the plain render of the invoice example, in the same run.
 *
 *   npm run bench:render -- [--n 300] [--launch-n 40] [--rounds 3] [--concurrency 2] [--outputs-n 60]
 *   npm run bench:render -- --outputs-only     (issue 34's part alone)
 */

/** One side's documents, seconds and latencies, summed over the rounds. */
class Side {
  docs = 0;
  seconds = 0;
  readonly latencies: number[] = [];
  bytes = 0;
  pages = 0;

  constructor(readonly name: string) {}

  get docsPerSecond(): number {
    return this.docs / this.seconds;
  }

  get medianMs(): number {
    return median(this.latencies);
  }
}

/** Runs `n` renders with at most `concurrency` at a time; each render's latency is recorded. */
async function measure(side: Side, n: number, concurrency: number, renderOne: () => Promise<Buffer | void>): Promise<void> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next += 1;
        const t0 = performance.now();
        const pdf = await renderOne();
        side.latencies.push(performance.now() - t0);
        if (pdf) {
          side.bytes = pdf.length;
          side.pages = countPdfPages(pdf);
        }
      }
    }),
  );
  side.seconds += (performance.now() - started) / 1000;
  side.docs += n;
}

async function launchPerDocument(doc: HtmlDocument, executablePath: string | undefined, maxPages: number): Promise<Buffer> {
  const launched = await launchBrowser(executablePath);
  try {
    const page = await launched.browser.newPage();
    await preparePage(page, []);
    return (await printPdf(page, doc, maxPages)).pdf;
  } finally {
    await disposeBrowser(launched);
  }
}

function chromiumVersion(path: string): string {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return path;
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--outputs-only')) return benchOutputs();
  const n = arg('n', 300);
  const launchN = arg('launch-n', 40);
  const rounds = arg('rounds', 3);
  const concurrency = arg('concurrency', 2);
  const executablePath = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
  const items = Array.from({ length: 12 }, (_, i) => ({ description: `Line item ${i + 1}`, qty: i + 1, price: 9.5 * (i + 1) }));
  const data = await resolveVariables(INVOICE, { number: 'INV-0042', customer: 'Ada Lovelace', items });
  const invoice = await buildHtml(INVOICE.schema, data);
  const example = JSON.parse(readFileSync(join(__dirname, '../../docs/examples/invoice.json'), 'utf8')) as { definition: TemplateDefinition; sampleData: Record<string, unknown> };
  const exampleData = await resolveVariables(example.definition, example.sampleData);
  const exampleDoc = await buildHtml(example.definition.schema, exampleData);
  // The same page size and margins with nothing on the page and no footer: what any print costs.
  const blank = await buildHtml({ pageSize: 'A4', sections: [{ id: 'blank', components: [] }] }, {});
  const maxPages = 10;
  const pageRanges = `1-${maxPages + 1}`;
  const loadBefore = loadavg();

  const pooled = new Side('warm pool: invoice');
  const rich = new Side('warm pool: invoice example');
  const limit = new Side('warm pool: blank page');
  const peer = new Side('jsreport: invoice');
  const baseline = new Side('launch per document: invoice');
  const pool = new ChromiumPool({ executablePath, poolSize: concurrency, maxDocumentsPerBrowser: 200, imageAllowlist: [] });
  const jsreport = await startJsreport(executablePath, concurrency);
  try {
    await pool.start();
    // Warm-up, not counted: every page of the pool and every jsreport thread has printed once.
    await Promise.all(Array.from({ length: concurrency * 2 }, () => pool.renderPdf(invoice, { maxPages })));
    await Promise.all(Array.from({ length: concurrency * 2 }, () => jsreport.renderPdf(invoice, pageRanges, TAGGED_PDF)));
    const share = (total: number, round: number) => Math.floor(total / rounds) + (round < total % rounds ? 1 : 0);
    for (let r = 0; r < rounds; r++) {
      await measure(pooled, share(n, r), concurrency, async () => (await pool.renderPdf(invoice, { maxPages })).pdf);
      await measure(limit, share(n, r), concurrency, async () => (await pool.renderPdf(blank, { maxPages })).pdf);
      await measure(rich, share(n, r), concurrency, async () => (await pool.renderPdf(exampleDoc, { maxPages })).pdf);
      await measure(peer, share(n, r), concurrency, () => jsreport.renderPdf(invoice, pageRanges, TAGGED_PDF));
      await measure(baseline, share(launchN, r), concurrency, () => launchPerDocument(invoice, executablePath, maxPages));
    }
  } finally {
    await pool.close();
    await jsreport.close();
  }

  const fmt = (x: number, d = 1) => x.toFixed(d);
  const row = (s: Side) =>
    `  ${s.name.padEnd(30)} ${fmt(s.docsPerSecond, 2).padStart(8)} docs/s ${fmt(s.medianMs).padStart(8)} ms median ${String(s.docs).padStart(5)} docs ${String(s.pages).padStart(2)} page(s) ${String(Math.round(s.bytes / 1024)).padStart(4)} KiB`;
  const goal = (label: string, ratio: number, target: string, met: boolean) => `  ${label.padEnd(58)} ${fmt(ratio, 2).padStart(6)}x   goal ${target.padEnd(7)} ${met ? 'met' : 'NOT MET'}`;
  console.log(`bench:render  one-page invoice, concurrency ${concurrency}, ${rounds} rounds, ${chromiumVersion(executablePath)}, ${availableParallelism()} cores`);
  console.log(`  peer: ${jsreport.label}; PDFs ${TAGGED_PDF ? 'tagged' : 'untagged'} on both sides`);
  console.log(row(pooled));
  console.log(row(rich));
  console.log(row(limit));
  console.log(row(peer));
  console.log(row(baseline));
  const launchRatio = pooled.docsPerSecond / baseline.docsPerSecond;
  const peerRatio = pooled.docsPerSecond / peer.docsPerSecond;
  const blankRatio = limit.docsPerSecond / pooled.docsPerSecond;
  console.log(goal('1a warm pool vs launch per document (throughput)', launchRatio, '>= 25', launchRatio >= 25));
  console.log(goal('1b warm pool vs jsreport (throughput)', peerRatio, '>= 1.5', peerRatio >= 1.5));
  console.log(goal('1c invoice cost vs blank page cost (1 / throughput)', blankRatio, '<= 1.5', blankRatio <= 1.5));
  const exampleRatio = pooled.docsPerSecond / rich.docsPerSecond;
  console.log(goal('31 invoice example cost vs the invoice (1 / throughput)', exampleRatio, '<= 1.5', exampleRatio <= 1.5));
  console.log(`  1c by median latency: ${fmt(pooled.medianMs / limit.medianMs, 2)}x; load average ${loadBefore.map((l) => fmt(l, 2)).join(' ')} before, ${loadavg().map((l) => fmt(l, 2)).join(' ')} after`);
  await benchOutputs();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
