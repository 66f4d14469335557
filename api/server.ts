import type { Server } from 'node:http';
import type { Services } from '../platform/services';
import { createApp, type AppOptions } from './app';

/**
 * Starts the HTTP API; resolves once it listens. `close()` stops accepting and drains. `port` may
 * be an HTTP server that already listens (bound before the configuration that names its address
 * was loaded, as the tests do, so that no other process takes the port meanwhile): it then serves the API.
 */
export async function startApiServer(
  services: Services,
  options: AppOptions = {},
  port: number | Server = services.config.port,
  host = services.config.host,
): Promise<{ server: Server; url: string; syncCredentials(): Promise<void>; close(): Promise<void> }> {
  const app = createApp(services, options);
  let server: Server;
  if (typeof port === 'number') {
    server = app.listen(port, host);
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  } else {
    server = port;
    const handle = app.callback();
    server.on('request', (req, res) => void handle(req, res));
  }
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${actualPort}`,
    syncCredentials: app.syncCredentials,
    // In-flight requests finish first, so the usage they recorded is in the final flush.
    close: async () => {
      await new Promise<void>((resolve) => {
        // A keep-alive connection busy when close() is called goes idle when its answer is written,
        // and Node's server would then hold it for keepAliveTimeout before close() returns: each is
        // closed as soon as it is idle instead.
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
      });
      await app.shutdown();
    },
  };
}
