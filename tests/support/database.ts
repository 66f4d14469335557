import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The machine's Postgres; each test file gets a database of its own, dropped at the end. */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The integration run's migrated database (tests/support/global-setup.ts): every test database is a
 * copy of it (`CREATE DATABASE … TEMPLATE`, a file copy), so a file does not run the migrations again;
 * the service's start-up still runs them and finds every one applied. Unset outside that run.
 */
export const TEMPLATE_DATABASE_ENV = 'TEST_TEMPLATE_DATABASE';

/**
 * A database of the test file's own: a copy of the migrated template when the run has one (the
 * service's schema already in place), or empty with `{ empty: true }` (a test's own tables, as a
 * tenant's database would hold them).
 */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `formwork_test_${randomBytes(6).toString('hex')}`;
  const template = opts.empty ? undefined : process.env[TEMPLATE_DATABASE_ENV];
  await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  return { url: databaseUrl(name), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
