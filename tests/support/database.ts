import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The machine's Postgres; each test file gets a database of its own, dropped at the end. */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `formwork_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
