import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers } from './create-workers';
import { runRole } from './run-role';
import { createServices } from './services';
import { ensureSearchAttributes, installTemporalLogging } from './temporal';

/**
 * `npm run start:worker`: the main Temporal worker role alone, against configured services. It
 * polls the main task queue only (workflows, mail, webhooks, approvals, deliveries); renders run in
 * the render-worker role (`worker/render-main.ts`), so a crashed or stuck render cannot stop it.
 */
runRole('worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { role: 'worker' });
  installTemporalLogging(config.logLevel);
  const services = await createServices(config, logger);
  await ensureSearchAttributes(services.temporal, logger);
  const workers = await createWorkers(services, { queues: ['main'] });
  const done = workers.run();
  logger.info('worker started', { taskQueue: services.taskQueues.main });
  return async () => {
    await workers.shutdown();
    await done;
    await services.close();
  };
});
