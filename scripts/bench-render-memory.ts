import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createChromiumPool } from '../adapters/rendering/chromium-pool';
import { createEvalHost } from '../adapters/evaluation/eval-host';
import { renderDocument } from '../adapters/rendering/render-document';
import { loadConfig } from '../domain/config';
import { renderLimitsOf } from '../platform/services';
import { INVOICE } from './bench-invoice';
import { intArg as arg } from './bench-stats';

/**
 * Issue 17, goal 4a: a render worker's memory after 10,000 PDFs within 20 % of its memory after
 * 1,000 (browser recycling bounds what Chromium accumulates). A child process is the render
 * worker's render stack, built from the configuration as the render worker builds it: the
 * Chromium pool (RENDER_POOL_SIZE pages, recycled after RENDER_BROWSER_MAX_DOCUMENTS) and the
 * evaluation processes, printing through renderDocument with the render worker's number of
 * activity slots (twice the pool) busy. Temporal polling and storage are left out: they hold no
 * per-document state. This process samples the child's whole process tree (Node, Chromium's
 * processes, the evaluation processes) twice a second from /proc: RSS summed, and PSS (shared
 * pages split between the processes sharing them, so Chromium's shared memory counts once).
 * Each mark is the mean and the peak over the last browser lifetime before it (the last
 * RENDER_BROWSER_MAX_DOCUMENTS documents), so both marks cover one whole recycle cycle.
 *
 *   npm run bench:render-memory -- [--n 10000] [--first 1000]
 */

interface Progress {
  done: number;
  generation: number;
}

/** The child: prints `n` invoices, each with its own number, customer and line count. */
async function child(n: number): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' });
  const pool = createChromiumPool(config.rendering, config.browser.executablePath);
  const evaluator = createEvalHost(config.evaluation);
  const deps = { pdfRenderer: pool, evaluator, limits: renderLimitsOf(config), imageAllowlist: config.rendering.imageHostAllowlist };
  const slots = config.rendering.poolSize * 2;
  let next = 0;
  let done = 0;
  try {
    await Promise.all(
      Array.from({ length: slots }, async () => {
        while (next < n) {
          const i = (next += 1);
          const items = Array.from({ length: 5 + (i % 12) }, (_, k) => ({ description: `Item ${k + 1} of order ${i}`, qty: 1 + (k % 5), price: 3.5 * (k + 1) + (i % 7) }));
          const out = await renderDocument(deps, { tenant: `tenant-${i % 4}`, template: INVOICE, variables: { number: `INV-${i}`, customer: `Customer ${i}`, items }, format: 'pdf' });
          if (out.pageCount !== 1) throw new Error(`document ${i} printed ${out.pageCount} pages`);
          done += 1;
          process.send!({ done, generation: pool.browserGeneration } satisfies Progress);
        }
      }),
    );
  } finally {
    await pool.close();
    await evaluator.close();
  }
}

interface Sample {
  done: number;
  rssKiB: number;
  pssKiB: number;
  nodeRssKiB: number;
  processes: number;
}

/** The process and all its descendants, from /proc/<pid>/stat's parent ids. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // the process ended while the tree was read
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

function kib(file: string, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function sample(root: number, done: number): Sample {
  const pids = tree(root);
  let rssKiB = 0;
  let pssKiB = 0;
  for (const pid of pids) {
    rssKiB += kib(`/proc/${pid}/status`, 'VmRSS');
    pssKiB += kib(`/proc/${pid}/smaps_rollup`, 'Pss');
  }
  return { done, rssKiB, pssKiB, nodeRssKiB: kib(`/proc/${root}/status`, 'VmRSS'), processes: pids.length };
}

interface Window {
  mark: number;
  samples: number;
  meanRss: number;
  peakRss: number;
  meanPss: number;
  peakPss: number;
  meanNode: number;
  processes: number;
}

function windowAt(samples: Sample[], mark: number, span: number): Window {
  const inside = samples.filter((s) => s.done > mark - span && s.done <= mark);
  if (inside.length === 0) throw new Error(`no sample between ${mark - span} and ${mark} documents`);
  const mean = (f: (s: Sample) => number) => inside.reduce((a, s) => a + f(s), 0) / inside.length;
  const peak = (f: (s: Sample) => number) => Math.max(...inside.map(f));
  return {
    mark,
    samples: inside.length,
    meanRss: mean((s) => s.rssKiB),
    peakRss: peak((s) => s.rssKiB),
    meanPss: mean((s) => s.pssKiB),
    peakPss: peak((s) => s.pssKiB),
    meanNode: mean((s) => s.nodeRssKiB),
    processes: Math.round(mean((s) => s.processes)),
  };
}

async function parent(): Promise<void> {
  const n = arg('n', 10_000);
  const first = arg('first', Math.min(1000, Math.floor(n / 10)));
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' });
  const span = config.rendering.browserMaxDocuments;
  if (first < span || n < first) throw new Error(`need --n >= --first >= RENDER_BROWSER_MAX_DOCUMENTS (${span})`);
  const worker = fork(__filename, ['--child', String(n)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const samples: Sample[] = [];
  let progress: Progress = { done: 0, generation: 0 };
  const started = Date.now();
  worker.on('message', (m: Progress) => {
    progress = m;
    if (m.done % 1000 === 0) {
      const s = samples.at(-1);
      console.log(`  ${String(m.done).padStart(6)} PDFs  ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  browser #${m.generation}  tree RSS ${s ? (s.rssKiB / 1024).toFixed(0) : '?'} MiB`);
    }
  });
  const timer = setInterval(() => {
    if (progress.done > 0) samples.push(sample(worker.pid!, progress.done));
  }, 500);
  const code = await new Promise<number | null>((resolve) => worker.on('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`the render process exited with ${code}`);
  const seconds = (Date.now() - started) / 1000;
  const a = windowAt(samples, first, span);
  const b = windowAt(samples, n, span);
  const mib = (k: number) => `${(k / 1024).toFixed(0).padStart(5)} MiB`;
  const row = (w: Window) =>
    `  after ${String(w.mark).padStart(6)} PDFs: tree RSS mean ${mib(w.meanRss)} peak ${mib(w.peakRss)} | tree PSS mean ${mib(w.meanPss)} peak ${mib(w.peakPss)} | Node RSS ${mib(w.meanNode)} | ${w.processes} processes, ${w.samples} samples`;
  console.log(`bench:render-memory  ${n} invoices in ${seconds.toFixed(0)} s (${(n / seconds).toFixed(1)} PDFs/s), RENDER_POOL_SIZE ${config.rendering.poolSize}, ${config.rendering.poolSize * 2} renders at once, browser recycled every ${span} documents (${progress.generation} browsers)`);
  console.log(`  each mark: the last ${span} documents before it (one browser lifetime)`);
  console.log(row(a));
  console.log(row(b));
  const growth = (x: number, y: number) => (y / x - 1) * 100;
  const rss = growth(a.meanRss, b.meanRss);
  const pss = growth(a.meanPss, b.meanPss);
  const peak = growth(a.peakRss, b.peakRss);
  console.log(`  4a tree RSS after ${n} vs after ${first} (mean): ${rss >= 0 ? '+' : ''}${rss.toFixed(1)} %   goal within 20 %   ${Math.abs(rss) <= 20 ? 'met' : 'NOT MET'}`);
  console.log(`     peak RSS ${peak >= 0 ? '+' : ''}${peak.toFixed(1)} %, mean PSS ${pss >= 0 ? '+' : ''}${pss.toFixed(1)} %`);
}

const run = process.argv[2] === '--child' ? child(Number(process.argv[3])) : parent();
run.catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
