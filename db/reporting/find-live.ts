import type { EntityTarget, ObjectLiteral } from 'typeorm';
import type { Queryable } from '../sql';
import { isUuid } from '../../domain/ids';

/**
 * A live (not soft-deleted) row of the project by UUID, short id (`<prefix>…`) or slug: how query
 * objects and reports are named in paths and bodies. `lock` takes it FOR UPDATE (publish, restore).
 * Null when there is none; the caller answers with its own not-found code.
 */
export async function findLiveByRef<T extends ObjectLiteral>(
  db: Queryable,
  entity: EntityTarget<T>,
  projectId: string,
  ref: string,
  shortIdPrefix: string,
  lock = false,
): Promise<T | null> {
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 200) return null;
  const qb = db.getRepository(entity).createQueryBuilder('e').where('e.projectId = :projectId AND e.deletedAt IS NULL', { projectId });
  if (isUuid(ref)) qb.andWhere('e.id = :ref', { ref });
  else if (ref.startsWith(shortIdPrefix)) qb.andWhere('e.shortId = :ref', { ref });
  else qb.andWhere('e.slug = :ref', { ref: ref.toLowerCase() });
  if (lock) qb.setLock('pessimistic_write');
  return qb.getOne();
}
