import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityInterceptorsFactory, WorkerInterceptors } from '@temporalio/worker';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExcelRenderer } from '../adapters/rendering/excel-threads';
import type { PdfRenderer } from '../adapters/rendering/pdf-renderer';
import type { AttemptDeliveryResult } from '../activities/webhooks/attempt-delivery.activity';
import type { Config } from '../domain/config';
import type { JobOutcome } from '../domain/documents/job-status';
import type { Services } from './services';

/**
 * Every Prometheus metric of the service (docs/operations.md "Observing"), for all three roles.
 * Labels never carry a tenant (project, template, user) or anything a client chose: each label has a
 * fixed, short list of values, so the number of series stays the same however many projects there are.
 *
 * One registry per process: the events (requests, renders, deliveries) are counted where they happen;
 * the figures only the database or Temporal know (open jobs, open circuits, task queue backlogs) are
 * read when scraped, by the API role only (every replica would report the same global figure).
 */
const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'formwork_' });

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const httpRequests = new Histogram({
  name: 'formwork_http_request_duration_seconds',
  help: 'API requests by method, route template (unmatched: no route) and status code',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const renderDuration = new Histogram({
  name: 'formwork_render_duration_seconds',
  help: 'Time Chromium printed a PDF or an Excel thread built a workbook (previews, generations and streamed report workbooks), by outcome',
  labelNames: ['kind', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
  registers: [registry],
});

const jobsFinished = new Counter({
  name: 'formwork_document_jobs_finished_total',
  help: 'Document jobs ended by a render, by the status they ended in',
  labelNames: ['status'] as const,
  registers: [registry],
});

const webhookDeliveries = new Counter({
  name: 'formwork_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts (document events and Flow deliveries) by outcome: delivered, retryable (a retry follows or the schedule ran out), permanent',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const circuitOpenings = new Counter({
  name: 'formwork_flow_circuit_openings_total',
  help: "Flow gates' circuit breakers opened by a run's outcome (reaching max failures, or a failed half-open trial)",
  registers: [registry],
});

/** A run's outcome opened its gate's circuit breaker (the Flow run activities' `onCircuitOpened`). */
export function countCircuitOpening(): void {
  circuitOpenings.inc();
}

/** The HTTP middleware's record of one request (api/middleware/http-metrics.ts). */
export function observeHttpRequest(method: string, route: string | undefined, status: number, seconds: number): void {
  httpRequests.observe({ method: HTTP_METHODS.has(method) ? method : 'OTHER', route: route ?? 'unmatched', status: String(status) }, seconds);
}

async function timed<T>(kind: 'pdf' | 'excel', work: () => Promise<T>): Promise<T> {
  const end = renderDuration.startTimer({ kind });
  try {
    const result = await work();
    end({ outcome: 'ok' });
    return result;
  } catch (err) {
    end({ outcome: 'error' });
    throw err;
  }
}

/**
 * `target` with each of `methods` timed as a render of `kind`. A proxy, not a wrapper object:
 * everything else (the pool's stats, its browser generation) still reads from the real pool.
 */
function timedRenders<T extends object>(target: T, methods: Array<keyof T>, kind: 'pdf' | 'excel'): T {
  const timedMethods = new Map<PropertyKey, (...args: unknown[]) => Promise<unknown>>(
    methods.map((method) => {
      const original = target[method] as (...args: unknown[]) => Promise<unknown>;
      return [method, (...args: unknown[]) => timed(kind, () => original.apply(target, args))];
    }),
  );
  return new Proxy(target, {
    get(t, prop) {
      const timedMethod = timedMethods.get(prop);
      if (timedMethod) return timedMethod;
      const value: unknown = Reflect.get(t, prop, t);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });
}

/** The process's Chromium pool, timing each print (every render path goes through it: jobs, Flow, reports, previews). */
export function timedPdfRenderer<T extends PdfRenderer>(pdf: T): T {
  return timedRenders(pdf, ['renderPdf'], 'pdf');
}

/** The process's Excel threads, timing each workbook: built whole (documents, previews) or streamed (report outputs). */
export function timedExcelRenderer<T extends ExcelRenderer>(excel: T): T {
  return timedRenders(excel, ['renderExcel', 'streamExcel'], 'excel');
}

/**
 * Counts what activities report in their results, without the activities knowing about metrics
 * (activities/ may not import platform/): a render's job outcome and a webhook attempt's outcome.
 */
const activityMetrics: ActivityInterceptorsFactory = (ctx: ActivityContext) => ({
  inbound: {
    async execute(input, next) {
      const result: unknown = await next(input);
      const type = ctx.info.activityType;
      if (type === 'renderJob') jobsFinished.inc({ status: (result as JobOutcome).status });
      else if (type === 'renderJobs') for (const outcome of result as JobOutcome[]) jobsFinished.inc({ status: outcome.status });
      else if (type === 'attemptDelivery') {
        const { outcome } = result as AttemptDeliveryResult;
        webhookDeliveries.inc({ outcome: outcome === 'retry' ? 'retryable' : outcome });
      }
      return result;
    },
  },
});

/** A Worker's interceptors plus the metrics one: `interceptors: withActivityMetrics(activityInterceptors())`. */
export function withActivityMetrics(interceptors: WorkerInterceptors): WorkerInterceptors {
  return { ...interceptors, activity: [...(interceptors.activity ?? []), activityMetrics] };
}

/**
 * Figures read at scrape time from the database and Temporal: open jobs by status (a partial index
 * covers them), gates whose circuit breaker is not closed, and each task queue's backlog. A source
 * that fails leaves its series out of that scrape (logged), instead of failing the whole scrape.
 */
function globalGauges(services: Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'logger'>): Registry {
  const gauges = new Registry();
  const guarded = async (what: string, read: () => Promise<void>) => {
    try {
      await read();
    } catch (err) {
      services.logger.warn('metrics: could not read a figure', { what, err });
    }
  };
  new Gauge({
    name: 'formwork_document_jobs_open',
    help: 'Document jobs not yet ended, by status (queued, processing)',
    labelNames: ['status'] as const,
    registers: [gauges],
    async collect() {
      this.reset();
      await guarded('open jobs', async () => {
        const rows: Array<{ status: string; n: string }> = await services.db.query(
          `SELECT status, count(*) AS n FROM document_jobs WHERE status IN ('queued','processing') GROUP BY status`,
        );
        for (const status of ['queued', 'processing']) this.set({ status }, Number(rows.find((r) => r.status === status)?.n ?? 0));
      });
    },
  });
  new Gauge({
    name: 'formwork_flow_circuit_breakers',
    help: 'Flow gates whose circuit breaker is open or half-open (a rise is an opening)',
    labelNames: ['state'] as const,
    registers: [gauges],
    async collect() {
      this.reset();
      await guarded('circuit breakers', async () => {
        const rows: Array<{ state: string; n: string }> = await services.db.query(
          `SELECT circuit_state AS state, count(*) AS n FROM flow_gates WHERE circuit_state IN ('open','half_open') GROUP BY circuit_state`,
        );
        for (const state of ['open', 'half_open']) this.set({ state }, Number(rows.find((r) => r.state === state)?.n ?? 0));
      });
    },
  });
  new Gauge({
    name: 'formwork_task_queue_backlog',
    help: "Tasks waiting in a task queue (Temporal's approximate backlog; activity tasks on egress, render and query, workflow and activity tasks on main)",
    labelNames: ['queue', 'type'] as const,
    registers: [gauges],
    async collect() {
      this.reset();
      const { namespace } = services.temporal.options;
      const read = async (queue: 'main' | 'egress' | 'render' | 'query', type: 'workflow' | 'activity') => {
        const res = await services.temporal.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: services.taskQueues[queue] },
          taskQueueType: type === 'workflow' ? 1 : 2, // TASK_QUEUE_TYPE_WORKFLOW, _ACTIVITY
          reportStats: true,
        });
        this.set({ queue, type }, Number(res.stats?.approximateBacklogCount ?? 0));
      };
      await guarded('task queue backlog', async () => {
        await Promise.all([read('main', 'workflow'), read('main', 'activity'), read('egress', 'activity'), read('render', 'activity'), read('query', 'activity')]);
      });
    },
  });
  return gauges;
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on METRICS_HOST:METRICS_PORT, a listener of its own: never on the public HTTP port,
 * so a load balancer that exposes the API does not expose the metrics. With METRICS_TOKEN set it answers
 * only `Authorization: Bearer <token>` (401 otherwise). `global`: also the database and Temporal figures
 * (the API role; `npm start`'s process).
 */
export async function startMetricsServer(
  services: Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'logger'> & { config: { metrics: Pick<Config['metrics'], 'host'> & Partial<Config['metrics']> } },
  opts: { global: boolean },
): Promise<MetricsServer | undefined> {
  const { port, host, token } = services.config.metrics;
  if (port === undefined) return undefined;
  const served = opts.global ? Registry.merge([registry, globalGauges(services)]) : registry;
  const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
      return;
    }
    const given = Buffer.from(req.headers.authorization ?? '');
    if (expected && !(given.length === expected.length && timingSafeEqual(given, expected))) {
      res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer realm="metrics"' }).end('Unauthorized\n');
      return;
    }
    served.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': served.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err) => {
        services.logger.error('metrics: scrape failed', { err });
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('Scrape failed\n');
      },
    );
  });
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${actualPort}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
