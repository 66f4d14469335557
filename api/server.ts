import type { Server } from 'node:http';
import type { Services } from '../platform/services';
import { createApp, type AppOptions } from './app';

/** Starts the HTTP API; resolves once it listens. `close()` stops accepting and drains. */
export async function startApiServer(services: Services, options: AppOptions = {}, port = services.config.port, host = services.config.host): Promise<{ server: Server; url: string; syncCredentials(): Promise<void>; close(): Promise<void> }> {
  const app = createApp(services, options);
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${actualPort}`,
    syncCredentials: app.syncCredentials,
    // In-flight requests finish first, so the usage they recorded is in the final flush.
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await app.shutdown();
    },
  };
}
