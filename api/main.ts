import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { startMetricsServer } from '../platform/metrics';
import { runRole } from '../platform/run-role';
import { createServices } from '../platform/services';
import { ensureSearchAttributes } from '../platform/temporal';
import { startApiServer } from './server';

/** `npm run start:api`: the HTTP API alone, stateless, against configured services. */
runRole('api', async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { role: 'api' });
  const services = await createServices(config, logger);
  // Every workflow start sets the Formwork search attributes: without them, stop now rather than fail each start.
  await ensureSearchAttributes(services.temporal, logger, false);
  const api = await startApiServer(services);
  const metrics = await startMetricsServer(services, { global: true });
  logger.info('api listening', { url: api.url, publicUrl: config.publicUrl, metrics: metrics?.url });
  return async () => {
    await metrics?.close();
    await api.close();
    await services.close();
  };
});
