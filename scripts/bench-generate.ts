import { performance } from 'node:perf_hooks';
import { renderDocument } from '../activities/rendering/render-document';
import type { TemplateDefinition } from '../domain/templates/template.types';
import { withBench } from './bench-harness';

/**
 * End-to-end generation benchmark: a batch of N PDF documents through the HTTP API, Temporal and
 * the renderer, next to the pure rendering rate of the same template through the same warm pool,
 * measured in the same run, so the orchestration overhead shows as a ratio.
 *
 *   npm run bench:generate [-- --n 500]
 * Needs Postgres (DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432) and the
 * Temporal CLI (a dev server is started); a scratch database is created and dropped.
 */

const N = Number(process.argv[process.argv.indexOf('--n') + 1]) || 500;

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

async function main(): Promise<void> {
  await withBench({ FREE_DOCUMENTS_PER_MONTH: '1000000', BATCH_MAX_DOCUMENTS: String(Math.max(N, 1000)) }, async ({ config, services, jwt, call }) => {
    const template = await call('POST', '/api/templates', jwt, TEMPLATE);
    await call('POST', `/api/templates/${template.id}/publish`, jwt, {});
    const key = (await call('POST', '/api/api-keys', jwt, { name: 'bench' })).plainKey;

    // Baseline: the renderer alone, same template, same warm pool, at the pool's concurrency.
    const definition = TEMPLATE as unknown as TemplateDefinition;
    await renderDocument({ pdfRenderer: services.pdfRenderer, evaluator: services.evaluator }, { tenant: 'bench', template: definition, variables: variables(0), format: 'pdf' });
    const baseN = Math.min(N, 100);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: config.rendering.poolSize }, async () => {
        while (next < baseN) await renderDocument({ pdfRenderer: services.pdfRenderer, evaluator: services.evaluator }, { tenant: 'bench', template: definition, variables: variables(next++), format: 'pdf' });
      }),
    );
    const renderRate = baseN / ((performance.now() - t0) / 1000);

    // End to end: one batch request through the API, Temporal, the render workers and storage.
    const started = Date.now();
    const batch = await call('POST', '/api/documents/generate/batch', key, { templateId: template.id, format: 'pdf', documents: Array.from({ length: N }, (_, i) => ({ variables: variables(i) })) });
    for (;;) {
      const status = await call('GET', `/api/documents/batches/${batch.batchId}`, key);
      if (status.status === 'completed') {
        if (status.completedJobs !== N) throw new Error(`only ${status.completedJobs} of ${N} completed`);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const [{ last }] = await services.db.query(`SELECT max(completed_at) AS last FROM document_jobs WHERE batch_id = $1`, [batch.batchId]);
    const seconds = (new Date(last).getTime() - started) / 1000;
    const e2eRate = N / seconds;

    console.log(`bench:generate  ${N} PDF documents in one batch, render pool ${config.rendering.poolSize}, batch concurrency ${config.documents.batchConcurrency}`);
    console.log(`  renderer alone (warm pool, ${baseN} docs): ${renderRate.toFixed(2)} docs/s`);
    console.log(`  end to end (API → Temporal → render → storage): ${e2eRate.toFixed(2)} docs/s, request to last completed ${seconds.toFixed(1)} s`);
    console.log(`  orchestration overhead: end-to-end rate is ${((e2eRate / renderRate) * 100).toFixed(0)}% of the pure rendering rate (ratio ${(renderRate / e2eRate).toFixed(2)}x)`);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
