import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers } from './create-workers';
import { startMetricsServer } from '../platform/metrics';
import { runRole } from '../platform/run-role';
import { createServices } from '../platform/services';
import { installTemporalLogging } from '../platform/temporal';

/**
 * `npm run start:render-worker`: the render worker role, against configured services. It polls the
 * render task queue only: document renders and Flow native renders, with this process's Chromium
 * pool, Excel threads and evaluation processes. Its own process, so a render that crashes it, runs
 * it out of memory or stalls it leaves the main queue (workflows, e-mail, approvals, deliveries)
 * running; Temporal hands an interrupted render to the next render worker (the activities
 * heartbeat and are idempotent).
 *
 * Started by `npm start` as a child process with an IPC channel: when that parent goes away,
 * however it ends, this process shuts down too instead of polling on as an orphan.
 */
runRole('render-worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { role: 'render-worker' });
  installTemporalLogging(config.logLevel, config.metrics.temporalBind);
  const services = await createServices(config, logger);
  const workers = await createWorkers(services, { queues: ['render'], schedules: false });
  const done = workers.run();
  const metrics = await startMetricsServer(services, { global: false });
  logger.info('render worker started', { taskQueue: services.taskQueues.render, pid: process.pid, metrics: metrics?.url });
  if (process.send) {
    process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
    process.send({ ready: true });
  }
  return async () => {
    await metrics?.close();
    await workers.shutdown();
    await done;
    await services.close();
  };
});
