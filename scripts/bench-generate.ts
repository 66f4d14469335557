import { performance } from 'node:perf_hooks';
import { renderDocument } from '../adapters/rendering/render-document';
import type { TemplateDefinition } from '../domain/templates/template.types';
import { addCpu, formatCpu, withCpu, type CpuUsage } from './bench-cpu';
import { withBench, type Bench } from './bench-harness';
import { intArg as arg, median, percentile } from './bench-stats';

/**
 * End-to-end generation benchmark (issue 17, goal 2 "Orchestration"; docs/performance.md), every
 * figure next to its baseline measured in the same run, on the same warm pool:
 *
 * 1. single documents: `POST /api/documents/generate` to the job being `completed` (one request at
 *    a time), interleaved with a render of the same document through the renderer alone;
 * 2. a batch of N PDF documents through the API, Temporal, the render worker and storage, against
 *    the renderer alone, measured before and after the batch (their combined rate, so a change of the
 *    machine's load during the run hits both sides), with as many documents in flight as the pool
 *    has pages and as the batch has: the faster of the two is the baseline.
 *
 *   npm run bench:generate [-- --n 1000 --singles 40]
 * Needs Postgres (DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432) and the
 * Temporal CLI (a dev server is started); a scratch database is created and dropped.
 */

const N = arg('n', 1000);
const SINGLES = arg('singles', 40);
/** Documents of each renderer-alone measurement (one before the batch, one after). */
const BASE_N = Math.min(N, arg('base', 120));
const GOAL_BATCH = 0.85;
const GOAL_SINGLE = 1.3;

const TEMPLATE = {
  name: 'Bench invoice',
  outputFormats: ['pdf'],
  schema: {
    pageSize: 'A4',
    footer: { right: 'Page {page} of {pages}' },
    sections: [
      {
        id: 'main',
        components: [
          { id: 'h', type: 'heading', props: { text: 'Invoice {{number}}', level: 1 } },
          { id: 'c', type: 'text', props: { text: 'Customer: {{customer}}' } },
          { id: 't', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Item', field: 'label' }, { header: 'Amount', field: 'amount', format: 'currency' }] } },
        ],
      },
    ],
  },
  variables: [
    { name: 'number', type: 'string', required: true },
    { name: 'customer', type: 'string', required: true },
    { name: 'items', type: 'array', required: true, items: { type: 'object', properties: [{ name: 'label', type: 'string' }, { name: 'amount', type: 'number' }] } },
  ],
};
const variables = (i: number) => ({ number: `INV-${i}`, customer: `Customer ${i}`, items: [{ label: 'Consulting', amount: 1200 + i }, { label: 'Travel', amount: 80 }] });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  await withBench({ FREE_DOCUMENTS_PER_MONTH: '1000000', BATCH_MAX_DOCUMENTS: String(Math.max(N, 1000)) }, async (bench) => {
    const { config, services, jwt, call } = bench;
    const template = await call('POST', '/api/templates', jwt, TEMPLATE);
    await call('POST', `/api/templates/${template.id}/publish`, jwt, {});
    const key = (await call('POST', '/api/api-keys', jwt, { name: 'bench' })).plainKey;
    // The renderer alone gets exactly what a job's render gets: the published definition, and the
    // FORMWORK FREE watermark (these jobs spend the free quota).
    const [{ definition }] = (await services.db.query(`SELECT definition FROM template_versions WHERE template_id = $1 ORDER BY version DESC LIMIT 1`, [template.id])) as Array<{
      definition: TemplateDefinition;
    }>;
    const renderAlone = (i: number) =>
      renderDocument({ pdfRenderer: services.pdfRenderer, evaluator: services.evaluator }, { tenant: 'bench', template: definition, variables: variables(i), format: 'pdf', watermark: true });

    /** Renders `n` documents through the renderer alone, `inFlight` at once; documents per second. */
    const renderRate = async (n: number, inFlight: number) => {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < n) await renderAlone(next++);
        }),
      );
      return n / ((performance.now() - t0) / 1000);
    };

    /** Where a single job's time went (ms, from the job's timestamps): one array per stage. */
    const stages = { answer: [] as number[], start: [] as number[], dispatch: [] as number[], activity: [] as number[], render: [] as number[] };
    /** One POST /generate, then the job's row polled every 5 ms: milliseconds from the request to `completed`. */
    const generateOne = async (i: number) => {
      const t0 = performance.now();
      const res = await call('POST', '/api/documents/generate', key, { templateId: template.id, format: 'pdf', variables: variables(i) });
      const answered = performance.now() - t0;
      for (;;) {
        const [row] = (await services.db.query(
          `SELECT status, extract(epoch FROM workflow_started_at - created_at) * 1000 AS start, extract(epoch FROM started_at - workflow_started_at) * 1000 AS dispatch,
                  extract(epoch FROM completed_at - started_at) * 1000 AS activity, generation_ms FROM document_jobs WHERE id = $1`,
          [res.jobId],
        )) as Array<{ status: string; start: number; dispatch: number; activity: number; generation_ms: number }>;
        if (row.status === 'completed') {
          stages.answer.push(answered);
          stages.start.push(Number(row.start));
          stages.dispatch.push(Number(row.dispatch));
          stages.activity.push(Number(row.activity));
          stages.render.push(row.generation_ms);
          return performance.now() - t0;
        }
        if (row.status !== 'queued' && row.status !== 'processing') throw new Error(`job ${res.jobId} ended ${row.status}`);
        await sleep(5);
      }
    };

    // Warm-up: the pool's pages, the evaluation workers, the workflow bundle's first activations.
    await renderRate(config.rendering.poolSize * 2, config.rendering.poolSize);
    for (let i = 0; i < 3; i++) await generateOne(i);

    // 1. Single documents, one at a time, each request next to a render of the same document alone.
    for (const k of Object.values(stages)) k.length = 0;
    const alone: number[] = [];
    const single: number[] = [];
    for (let i = 0; i < SINGLES; i++) {
      const t0 = performance.now();
      await renderAlone(i);
      alone.push(performance.now() - t0);
      single.push(await generateOne(i));
    }

    // 2. The batch, between two renderer-alone measurements. Each is taken with as many documents
    // in flight as the pool has pages and as the batch has (BATCH_CONCURRENCY), and the faster one
    // is the baseline: the renderer's best, whatever overlap of HTML building and printing it allows.
    const inFlights = [...new Set([config.rendering.poolSize, config.documents.batchConcurrency])];
    const aloneCpu = new Map<number, CpuUsage[]>(inFlights.map((k) => [k, []]));
    const measureAlone = async () => {
      const rates = new Map<number, number>();
      for (const k of inFlights) {
        const { result, cpu } = await withCpu(() => renderRate(BASE_N, k));
        rates.set(k, result);
        aloneCpu.get(k)!.push(cpu);
      }
      return rates;
    };
    const before = await measureAlone();
    const { result: batchRun, cpu: batchCpu } = await withCpu(() => runBatch(bench, key, template.id));
    const after = await measureAlone();
    const combined = new Map(inFlights.map((k) => [k, (2 * BASE_N) / (BASE_N / before.get(k)! + BASE_N / after.get(k)!)]));
    const [bestInFlight, baseRate] = [...combined].reduce((a, b) => (b[1] > a[1] ? b : a));

    const batchRatio = batchRun.rate / baseRate;
    const singleRatio = median(single) / median(alone);
    const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
    console.log(`bench:generate  render pool ${config.rendering.poolSize}, batch concurrency ${config.documents.batchConcurrency}, batch chunk ${config.documents.batchChunkSize}`);
    console.log(
      `  single document, ${SINGLES} requests one at a time: POST /api/documents/generate to completed median ${median(single).toFixed(0)} ms (p90 ${percentile(single, 90).toFixed(0)} ms); ` +
        `the same document through the renderer alone median ${median(alone).toFixed(0)} ms (p90 ${percentile(alone, 90).toFixed(0)} ms)`,
    );
    console.log(
      `    medians: request answered ${median(stages.answer).toFixed(0)} ms; job committed to workflow started (outbox) ${median(stages.start).toFixed(0)} ms; ` +
        `workflow started to render claimed ${median(stages.dispatch).toFixed(0)} ms; claimed to completed ${median(stages.activity).toFixed(0)} ms (render and store ${median(stages.render).toFixed(0)} ms)`,
    );
    console.log(`    ratio ${singleRatio.toFixed(2)}x the render alone (goal <= ${GOAL_SINGLE}x): ${verdict(singleRatio <= GOAL_SINGLE)}`);
    for (const k of inFlights) {
      console.log(
        `  renderer alone, ${k} documents in flight (warm pool, ${BASE_N} documents before and ${BASE_N} after the batch): ${combined.get(k)!.toFixed(2)} docs/s (before ${before.get(k)!.toFixed(2)}, after ${after.get(k)!.toFixed(2)})${k === bestInFlight ? ' <- baseline' : ''}`,
      );
    }
    console.log(`  end to end, ${N} PDF documents in one batch (API -> Temporal -> render -> storage): ${batchRun.rate.toFixed(2)} docs/s, request to last completed ${batchRun.seconds.toFixed(1)} s`);
    console.log(
      `    end-to-end rate is ${(batchRatio * 100).toFixed(1)} % of the renderer-alone rate (goal >= ${GOAL_BATCH * 100} %): ${verdict(batchRatio >= GOAL_BATCH)}`,
    );
    // Where the cores went (/proc, every process on the machine; scripts/bench-cpu.ts).
    console.log(`  the batch, end to end:`);
    for (const l of formatCpu(batchCpu)) console.log(l);
    console.log(`  the renderer alone, ${bestInFlight} in flight (before and after the batch):`);
    for (const l of formatCpu(addCpu(aloneCpu.get(bestInFlight)!))) console.log(l);
  });
}

/**
 * One batch request, waited for on the batch's row (every 250 ms: the bench's observer stays out of
 * the measured load; `GET /api/documents/batches/:id` lists every document with a signed link), then
 * checked once through the API.
 */
async function runBatch({ services, call }: Bench, key: string, templateId: string): Promise<{ rate: number; seconds: number }> {
  const started = Date.now();
  const batch = await call('POST', '/api/documents/generate/batch', key, { templateId, format: 'pdf', documents: Array.from({ length: N }, (_, i) => ({ variables: variables(i) })) });
  for (;;) {
    const [row] = (await services.db.query(`SELECT status FROM document_batches WHERE id = $1`, [batch.batchId])) as Array<{ status: string }>;
    if (row.status === 'completed') break;
    await sleep(250);
  }
  const status = await call('GET', `/api/documents/batches/${batch.batchId}`, key);
  if (status.completedJobs !== N) throw new Error(`only ${status.completedJobs} of ${N} completed`);
  const [{ last }] = await services.db.query(`SELECT max(completed_at) AS last FROM document_jobs WHERE batch_id = $1`, [batch.batchId]);
  const seconds = (new Date(last).getTime() - started) / 1000;
  return { rate: N / seconds, seconds };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
