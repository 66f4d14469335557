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

/**
 * A unique violation (23505), of `constraint` when given (an index name). pg's error, or TypeORM's
 * QueryFailedError around it (which copies the fields, and keeps the original as `driverError`).
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } } | null;
  const code = e?.code ?? e?.driverError?.code;
  return code === '23505' && (constraint === undefined || (e?.constraint ?? e?.driverError?.constraint) === constraint);
}
