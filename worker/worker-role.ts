import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers, type QueueRole } from './create-workers';
import { startMetricsServer } from '../platform/metrics';
import { runRole } from '../platform/run-role';
import { createServices } from '../platform/services';
import { installTemporalLogging } from '../platform/temporal';

/**
 * A worker role that polls one task queue in a process of its own (the render worker, the query
 * worker), against configured services. Started by `npm start` as a child process with an IPC
 * channel: it says when it is ready, and when that parent goes away, however it ends, this process
 * shuts down too instead of polling on as an orphan.
 */
export function runQueueRole(name: 'render-worker' | 'query-worker', queue: QueueRole): void {
  runRole(name, async () => {
    const config = loadConfig();
    const logger = createLogger(config.logLevel, { role: name });
    installTemporalLogging(config.logLevel, config.metrics.temporalBind);
    const services = await createServices(config, logger);
    const workers = await createWorkers(services, { queues: [queue], schedules: false });
    const done = workers.run();
    const metrics = await startMetricsServer(services, { global: false });
    logger.info(`${name.replace('-', ' ')} started`, { taskQueue: services.taskQueues[queue], pid: process.pid, metrics: metrics?.url });
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
}
