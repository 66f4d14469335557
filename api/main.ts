import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { runRole } from '../platform/run-role';
import { createServices } from '../platform/services';
import { startApiServer } from './server';

/** `npm run start:api`: the HTTP API alone, stateless, against configured services. */
runRole('api', async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { role: 'api' });
  const services = await createServices(config, logger);
  const api = await startApiServer(services);
  logger.info('api listening', { url: api.url, publicUrl: config.publicUrl });
  return async () => {
    await api.close();
    await services.close();
  };
});
