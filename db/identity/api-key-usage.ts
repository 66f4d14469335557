import type { Queryable } from '../sql';

/**
 * Usage counters of an API key (the stats endpoint). Written in batches, never once per request:
 * the API buffers requests in memory (api/identity/api-key-usage.ts) and the worker adds the
 * documents it generated, so the hot path of an authenticated request never writes to the key row.
 */

export interface ApiKeyUsageBatch {
  apiKeyId: string;
  /** UTC calendar day (`YYYY-MM-DD`) the requests were made on. */
  day: string;
  requests: number;
  /** Latest request time in the batch. */
  lastUsedAt: Date;
}

/**
 * Adds one batch in a single UPDATE. `requests_today` counts the day named by `requests_day`:
 * a batch for a later day starts it again, a batch for the same day adds to it, and a late batch
 * for an earlier day (another API replica flushing after midnight) only reaches the total, so a
 * replica's stale flush can never roll the day back. A key deleted meanwhile updates nothing.
 */
export async function addApiKeyUsage(db: Queryable, batch: ApiKeyUsageBatch): Promise<void> {
  await db.query(
    `UPDATE api_keys SET
        total_requests = total_requests + $2,
        requests_today = CASE
          WHEN requests_day IS NULL OR requests_day < $3::date THEN $2
          WHEN requests_day = $3::date THEN requests_today + $2
          ELSE requests_today END,
        requests_day = GREATEST(COALESCE(requests_day, $3::date), $3::date),
        last_used_at = GREATEST(COALESCE(last_used_at, $4::timestamptz), $4::timestamptz)
      WHERE id = $1`,
    [batch.apiKeyId, batch.requests, batch.day, batch.lastUsedAt.toISOString()],
  );
}

/** Counts `n` documents generated with a key (called by document generation once per success). */
export async function recordDocumentsGenerated(db: Queryable, apiKeyId: string, n = 1): Promise<void> {
  if (!Number.isInteger(n) || n <= 0) return;
  await db.query(`UPDATE api_keys SET documents_generated = documents_generated + $2 WHERE id = $1`, [apiKeyId, n]);
}

/** The UTC calendar day of `at`, as `requests_day` stores it. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
