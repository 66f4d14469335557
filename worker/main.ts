import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers } from './create-workers';
import { startMetricsServer } from '../platform/metrics';
import { runRole } from '../platform/run-role';
import { createServices } from '../platform/services';
import { ensureSearchAttributes, installTemporalLogging } from '../platform/temporal';

/**
 * `npm run start:worker`: the main Temporal worker role alone, against configured services. It
 * polls the main task queue (workflows, bookkeeping) and the egress queue (mail, webhooks, report
 * deliveries, custom render APIs), each with slots of its own; renders run in the
 * render-worker role (`worker/render-main.ts`) and tenants' datasource queries in the query-worker
 * role (`worker/query-main.ts`), so a crashed or stuck render or a hostile database cannot stop it.
 */
runRole('worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { role: 'worker' });
  installTemporalLogging(config.logLevel, config.metrics.temporalBind);
  const services = await createServices(config, logger);
  await ensureSearchAttributes(services.temporal, logger);
  const workers = await createWorkers(services, { queues: ['main', 'egress'] });
  const done = workers.run();
  const metrics = await startMetricsServer(services, { global: false });
  logger.info('worker started', { taskQueues: [services.taskQueues.main, services.taskQueues.egress], metrics: metrics?.url });
  return async () => {
    await metrics?.close();
    await workers.shutdown();
    await done;
    await services.close();
  };
});
