import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers } from './create-workers';
import { runRole } from './run-role';
import { createServices } from './services';
import { ensureSearchAttributes, installTemporalLogging } from './temporal';

/** `npm run start:worker`: the Temporal worker role alone, against configured services. */
runRole('worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { role: 'worker' });
  installTemporalLogging(config.logLevel);
  const services = await createServices(config, logger);
  await ensureSearchAttributes(services.temporal, logger);
  const workers = await createWorkers(services);
  const done = workers.run();
  logger.info('worker started', { taskQueues: services.taskQueues });
  return async () => {
    await workers.shutdown();
    await done;
    await services.close();
  };
});
