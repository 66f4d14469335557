import type { EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { isUuid } from '../domain/ids';
import type { Queryable } from './sql';

/**
 * A row of the project by UUID or by short id (`<prefix>…`, at most `maxLength` characters): how
 * channels, datasources, agents, tasks, imports, schedules and runs are named in paths and bodies.
 * Anything else is no row, never a query PostgreSQL refuses. Null when there is none; the caller
 * answers with its own not-found code.
 */
export async function findByIdOrShortId<T extends ObjectLiteral>(
  db: Queryable,
  entity: EntityTarget<T>,
  projectId: string,
  ref: string,
  shortIdPrefix: string,
  maxLength = Infinity,
): Promise<T | null> {
  if (typeof ref !== 'string') return null;
  const where = isUuid(ref) ? { id: ref, projectId } : ref.startsWith(shortIdPrefix) && ref.length <= maxLength ? { shortId: ref, projectId } : null;
  return where ? db.getRepository(entity).findOneBy(where as unknown as FindOptionsWhere<T>) : null;
}
