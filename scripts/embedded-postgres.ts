import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { freePort } from './free-port';

/**
 * `npm start` without DATABASE_URL: PGlite (Postgres compiled to WebAssembly) persisted under
 * DATA_DIR, served on a loopback port by pglite-socket so the same pg driver, TypeORM data source
 * and migrations run against it. PGlite executes one query at a time, so the pool is one
 * connection; production uses a real Postgres.
 */
/** Where `npm start` leaves the embedded database's address for `npm run admin`. */
export const EMBEDDED_DATABASE_URL_FILE = 'embedded-database-url';

export async function startEmbeddedPostgres(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const db = await PGlite.create(join(dataDir, 'pgdata'));
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 4 });
  await server.start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await writeFile(join(dataDir, EMBEDDED_DATABASE_URL_FILE), url);
  return {
    url,
    async stop() {
      await rm(join(dataDir, EMBEDDED_DATABASE_URL_FILE), { force: true });
      await server.stop();
      await db.close();
    },
  };
}

