import type { DataSource } from 'typeorm';
import { deleteExpiredKeys } from '../../db/idempotency/idempotency-keys';

/** Idempotency's part of the maintenance schedule (workflows/maintenance/maintenance.workflow.ts). */
export function createIdempotencyActivities(deps: { db: DataSource }) {
  return {
    /** Idempotency keys past their 24 h (docs/idempotency.md): deletes up to `limit`, returns how many. */
    async deleteExpiredIdempotencyKeys(input: { limit: number }): Promise<number> {
      return deleteExpiredKeys(deps.db, input.limit);
    },
  };
}
export type IdempotencyActivities = ReturnType<typeof createIdempotencyActivities>;
