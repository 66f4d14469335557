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

/** The unique index a failed insert or update ran into (`'unknown'` if unnamed), if that is why it failed. */
export function violatedIndex(err: unknown): string | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const e = err as { constraint?: string; driverError?: { constraint?: string } };
  return e.constraint ?? e.driverError?.constraint ?? 'unknown';
}

/**
 * An insert whose generated values (a slug, a short id) a unique index may refuse: runs `insert`,
 * and on a unique violation of an index named in `fresh` calls that entry (which picks a new
 * candidate for the next try) and runs `insert` again, `attempts` times in all. Any other error,
 * and the violation of the last try, are thrown as they are (callers translate them).
 */
export async function insertWithFreshCandidates<T>(
  attempts: number,
  fresh: Readonly<Record<string, () => void | Promise<void>>>,
  insert: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await insert();
    } catch (err) {
      const index = violatedIndex(err);
      const next = index === undefined || !Object.hasOwn(fresh, index) ? undefined : fresh[index];
      if (!next || attempt >= attempts) throw err;
      await next();
    }
  }
}
