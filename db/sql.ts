import type { DataSource, EntityManager } from 'typeorm';

export type Queryable = DataSource | EntityManager;

/**
 * Runs an UPDATE/DELETE … RETURNING and gives back the rows. TypeORM's Postgres driver answers
 * raw UPDATE and DELETE statements with `[rows, affectedCount]` rather than the rows alone.
 */
export async function modifyReturning<T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  const result = await db.query(sql, params);
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
