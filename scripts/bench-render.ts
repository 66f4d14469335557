import { performance } from 'node:perf_hooks';
import { ChromiumPool } from '../activities/rendering/chromium-pool';
import { disposeBrowser, launchBrowser, preparePage, printPdf } from '../activities/rendering/chromium-page';
import { buildHtml, type HtmlDocument } from '../domain/templates/build-html';
import type { TemplateDefinition } from '../domain/templates/template.types';
import { resolveVariables } from '../domain/templates/variables';

/**
 * Renders one invoice N times through the warm pool and through a launch-per-document baseline,
 * at the same concurrency, and prints throughput and median latency of each.
 *
 *   npm run build && node dist/scripts/bench-render.js [--n 50] [--concurrency 2]
 */

const INVOICE: TemplateDefinition = {
  schema: {
    pageSize: 'A4',
    currency: 'EUR',
    footer: { left: 'Formwork GmbH', right: 'Page {page} of {pages}' },
    sections: [
      {
        id: 'invoice',
        components: [
          { id: 'title', type: 'heading', props: { text: 'Invoice {{number}}', level: 1 } },
          { id: 'meta', type: 'keyValue', props: { items: [{ label: 'Customer', value: '{{customer}}' }, { label: 'Total', value: '{{total | currency}}' }] } },
          {
            id: 'lines',
            type: 'table',
            props: {
              dataSource: 'items',
              columns: [
                { header: 'Description', field: 'description' },
                { header: 'Qty', field: 'qty', format: 'number' },
                { header: 'Price', field: 'price', format: 'currency' },
              ],
            },
          },
          { id: 'qr', type: 'qrcode', props: { value: 'https://pay.example.com/{{number}}' } },
        ],
      },
    ],
  },
  variables: [{ name: 'items', type: 'array', required: true }],
  calculatedVariables: [{ name: 'total', expression: '$sum(items.(qty * price))' }],
};

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

interface Result {
  docsPerSecond: number;
  medianMs: number;
}

/** Runs `n` renders with at most `concurrency` at a time; each render's latency is recorded. */
async function measure(n: number, concurrency: number, renderOne: () => Promise<void>): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next += 1;
        const t0 = performance.now();
        await renderOne();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { docsPerSecond: n / seconds, medianMs: median(latencies) };
}

async function launchPerDocument(doc: HtmlDocument, executablePath: string | undefined, maxPages: number): Promise<void> {
  const launched = await launchBrowser(executablePath);
  try {
    const page = await launched.browser.newPage();
    await preparePage(page, []);
    await printPdf(page, doc, maxPages);
  } finally {
    await disposeBrowser(launched);
  }
}

async function main(): Promise<void> {
  const n = arg('n', 50);
  const concurrency = arg('concurrency', 2);
  const executablePath = process.env.PUPPETEER_EXECUTABLE_PATH;
  const items = Array.from({ length: 12 }, (_, i) => ({ description: `Line item ${i + 1}`, qty: i + 1, price: 9.5 * (i + 1) }));
  const data = await resolveVariables(INVOICE, { number: 'INV-0042', customer: 'Ada Lovelace', items });
  const doc = await buildHtml(INVOICE.schema, data);
  const maxPages = 10;

  const pool = new ChromiumPool({ executablePath, poolSize: concurrency, maxDocumentsPerBrowser: 200, imageAllowlist: [] });
  let pooled: Result;
  try {
    await pool.start();
    pooled = await measure(n, concurrency, async () => void (await pool.renderPdf(doc, { maxPages })));
  } finally {
    await pool.close();
  }
  const baseline = await measure(n, concurrency, () => launchPerDocument(doc, executablePath, maxPages));

  const row = (name: string, r: Result) => `${name.padEnd(22)} ${r.docsPerSecond.toFixed(2).padStart(8)} docs/s ${r.medianMs.toFixed(1).padStart(9)} ms median`;
  console.log(`bench-render: ${n} one-page invoices, concurrency ${concurrency}`);
  console.log(row('warm pool', pooled));
  console.log(row('launch per document', baseline));
  console.log(`ratio: ${(pooled.docsPerSecond / baseline.docsPerSecond).toFixed(1)}x throughput, ${(baseline.medianMs / pooled.medianMs).toFixed(1)}x lower median latency`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
