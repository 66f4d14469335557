import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startApiServer } from '../api/server';
import { loadConfig, type Config } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers } from '../worker/create-workers';
import { startMetricsServer } from '../platform/metrics';
import { runRole } from '../platform/run-role';
import { createServices } from '../platform/services';
import { ensureSearchAttributes, installTemporalLogging } from '../platform/temporal';
import { startChildRole } from './child-role';
import { startEmbeddedPostgres } from './embedded-postgres';
import { startEmbeddedTemporal } from './embedded-temporal';

/**
 * `npm start`: the whole service in one process tree — the HTTP API and the main Temporal worker in
 * this process, the render worker and the query worker as child processes (each its own event loop
 * and heap, so a render that crashes or stalls, or a tenant's hostile database, cannot stop the API
 * or the main queue; restarted if they die; the query worker's heap limited to
 * QUERY_WORKER_MAX_HEAP_MB), and every backing service that is not configured, embedded (contract
 * §1). Ctrl-C stops everything.
 */
runRole('formwork', async () => {
  const base = loadConfig();
  installTemporalLogging(base.logLevel, base.metrics.temporalBind);
  const dataDir = resolve(base.dataDir);
  await mkdir(dataDir, { recursive: true });
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir };
  const stops: Array<() => Promise<void>> = [];
  let uiUrl: string | undefined;

  try {
    if (!base.database.url) {
      const pg = await startEmbeddedPostgres(dataDir);
      stops.unshift(pg.stop);
      Object.assign(env, { DATABASE_URL: pg.url, DATABASE_POOL_SIZE: '1' });
    }
    if (!base.temporal.address) {
      const t = await startEmbeddedTemporal({ dataDir, cliPath: base.temporal.cliPath, port: base.temporal.port, uiPort: base.temporal.uiPort, namespace: base.temporal.namespace });
      stops.unshift(t.stop);
      env.TEMPORAL_ADDRESS = t.address;
      uiUrl = t.uiUrl;
    }
    const config = loadConfig(env);
    const logger = createLogger(config.logLevel);
    const services = await createServices(config, logger);
    stops.unshift(() => services.close());
    if (base.temporal.address) await ensureSearchAttributes(services.temporal, logger);
    const workers = await createWorkers(services, { queues: ['main', 'egress'] });
    const running = workers.run();
    stops.unshift(async () => {
      await workers.shutdown();
      await running;
    });
    // The render queue's worker: the same environment (embedded database and Temporal included).
    const renderWorker = startChildRole({ name: 'render-worker', file: join(__dirname, '..', 'worker', 'render-main.js'), env: { ...env, ...nextMetricsPorts(config, 1) } });
    stops.unshift(renderWorker.stop);
    // The query queue's worker: tenants' databases and the API's datasource calls, with a heap limit.
    const queryWorker = startChildRole({
      name: 'query-worker',
      file: join(__dirname, '..', 'worker', 'query-main.js'),
      env: { ...env, ...nextMetricsPorts(config, 2) },
      nodeArgs: [`--max-old-space-size=${config.reporting.queryWorkerMaxHeapMb}`],
    });
    stops.unshift(queryWorker.stop);
    const api = await startApiServer(services);
    stops.unshift(api.close);
    const metrics = await startMetricsServer(services, { global: true });
    if (metrics) stops.unshift(metrics.close);
    await Promise.all([renderWorker.ready, queryWorker.ready]);

    process.stdout.write(
      [
        '',
        'Formwork is running.',
        `  API:          ${config.publicUrl}  (health: ${config.publicUrl}/api/health)`,
        `  Temporal UI:  ${uiUrl ?? `(external cluster at ${config.temporal.address})`}`,
        `  Workers:      main queue in this process; render queue (pid ${renderWorker.pid}) and query queue (pid ${queryWorker.pid}) in child processes`,
        ...(metrics ? [`  Metrics:      ${metrics.url} (the render worker's on the next port, the query worker's on the one after)`] : []),
        `  Data:         ${dataDir}`,
        `  Storage:      ${config.storage.s3 ? `s3://${config.storage.s3.bucket}` : `${dataDir}/artefacts`}`,
        `  E-mail:       ${config.mail.smtpUrl ? 'SMTP' : `log + ${dataDir}/outbox`}`,
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
  } catch (err) {
    await stopAll(stops);
    throw err;
  }
  return () => stopAll(stops);
});

async function stopAll(stops: Array<() => Promise<void>>): Promise<void> {
  for (const stop of stops) {
    try {
      await stop();
    } catch (err) {
      process.stderr.write(`shutdown step failed: ${(err as Error).message}\n`);
    }
  }
}

/**
 * The worker children share this process's environment, so their metrics listeners would collide
 * with this one's: the n-th child takes the port n above each (METRICS_PORT + n, TEMPORAL_METRICS_BIND's port + n).
 */
function nextMetricsPorts(config: Config, n: number): Record<string, string> {
  const { port, temporalBind } = config.metrics;
  const next: Record<string, string> = {};
  if (port !== undefined) next.METRICS_PORT = String(port === 0 ? 0 : port + n);
  if (temporalBind) next.TEMPORAL_METRICS_BIND = temporalBind.replace(/:(\d+)$/, (_, p: string) => `:${Number(p) + n}`);
  return next;
}
