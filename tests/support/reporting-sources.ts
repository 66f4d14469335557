import { Client } from 'pg';
import { createTestDatabase } from './database';

/**
 * A tenant's database for the reporting browser tests: an empty database of the test's own on the
 * machine's Postgres (dropped at the end) with one small table, as a customer's warehouse would hold it.
 */
export interface SourceDatabase {
  /** The database's name, as a datasource's `config.database`. */
  name: string;
  /** Runs SQL in it (the test's own checks of what the app shows). */
  query<T extends Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createSourceDatabase(setup: string): Promise<SourceDatabase> {
  const db = await createTestDatabase({ empty: true });
  const name = new URL(db.url).pathname.slice(1);
  const query = async <T extends Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]> => {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(sql, values)).rows as T[];
    } finally {
      await client.end();
    }
  };
  await query(setup);
  return { name, query, drop: db.drop };
}
