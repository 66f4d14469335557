import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors';
import { sealSecret, unsealSecret } from '../../domain/secret-box';
import { modifyReturning, type Queryable } from '../sql';

/**
 * Idempotency keys (docs/idempotency.md): the only writer of `idempotency_keys`. A key is claimed
 * with one INSERT … ON CONFLICT; only the claim's holder (its lease token) completes or releases it.
 */

/** How long a key and its answer are kept. */
const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** How long a claim holds before another request with the same key and body may take it over. */
const IDEMPOTENCY_LEASE_SECONDS = 60;

/** What a repeat gets back: the first answer's status, selected headers and JSON body. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface KeyRequest {
  projectId: string;
  key: string;
  fingerprint: string;
  method: string;
  path: string;
}

export interface Claim {
  projectId: string;
  key: string;
  leaseToken: string;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: Claim }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'mismatch'; method: string; path: string }
  | { kind: 'in_flight'; leaseSecondsLeft: number };

/**
 * Claims the key, or says what holds it. A row past its expiry, or a claim whose lease ran out
 * (its request died) for the same fingerprint, is taken over in the same statement. A conflicting
 * row being completed by an open transaction makes the statement wait for it, then see it completed.
 */
export async function claimKey(db: Queryable, req: KeyRequest, leaseSeconds = IDEMPOTENCY_LEASE_SECONDS): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const leaseToken = randomUUID();
    const claimed = await modifyReturning<{ lease_token: string }>(
      db,
      `INSERT INTO idempotency_keys (project_id, key, fingerprint, method, path, state, lease_token, lease_until, created_at, expires_at, id)
       VALUES ($1, $2, $3, $4, $5, 'in_flight', $6, now() + make_interval(secs => $7), now(), now() + make_interval(secs => $8), $9)
       ON CONFLICT (project_id, key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path, state = 'in_flight',
         lease_token = EXCLUDED.lease_token, lease_until = EXCLUDED.lease_until, response = NULL,
         created_at = EXCLUDED.created_at, completed_at = NULL, expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= now()
          OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.lease_until <= now() AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
       RETURNING lease_token`,
      [req.projectId, req.key, req.fingerprint, req.method, req.path, leaseToken, leaseSeconds, IDEMPOTENCY_TTL_SECONDS, randomUUID()],
    );
    if (claimed[0]?.lease_token === leaseToken) return { kind: 'claimed', claim: { projectId: req.projectId, key: req.key, leaseToken } };
    const [row] = (await db.query(
      `SELECT fingerprint, state, response, method, path, GREATEST(0, EXTRACT(EPOCH FROM lease_until - now()))::float AS lease_left
         FROM idempotency_keys WHERE project_id = $1 AND key = $2`,
      [req.projectId, req.key],
    )) as Array<{ fingerprint: string; state: string; response: string | null; method: string; path: string; lease_left: number }>;
    // Released (its request failed) between the two statements: claim again.
    if (!row) continue;
    if (row.fingerprint !== req.fingerprint) return { kind: 'mismatch', method: row.method, path: row.path };
    if (row.state === 'completed' && row.response) return { kind: 'replay', answer: JSON.parse(unsealSecret(row.response)) as StoredAnswer };
    return { kind: 'in_flight', leaseSecondsLeft: row.lease_left };
  }
  throw new AppError('ERR_IDEM_002', undefined, { retryAfter: 1 });
}

/**
 * Stores the answer under the claim. Called inside the transaction that created the resource, it
 * commits or rolls back with it; a claim another request took over (after its lease ran out) is
 * refused with ERR_IDEM_002, which rolls that transaction back, so one key never creates twice.
 */
export async function completeKey(db: Queryable, claim: Claim, answer: StoredAnswer): Promise<void> {
  const rows = await modifyReturning(
    db,
    `UPDATE idempotency_keys SET state = 'completed', response = $4, completed_at = now()
      WHERE project_id = $1 AND key = $2 AND lease_token = $3 AND state = 'in_flight' RETURNING 1`,
    [claim.projectId, claim.key, claim.leaseToken, sealSecret(JSON.stringify(answer))],
  );
  if (rows.length === 0) throw new AppError('ERR_IDEM_002', 'This Idempotency-Key was taken over by another request', { retryAfter: 1 });
}

/** Frees the key of a request that created nothing (it failed), so the client can try again with it. */
export async function releaseKey(db: Queryable, claim: Claim): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE project_id = $1 AND key = $2 AND lease_token = $3 AND state = 'in_flight'`, [
    claim.projectId,
    claim.key,
    claim.leaseToken,
  ]);
}

/** Deletes up to `limit` keys past their 24 h; for the maintenance sweep. Returns how many. */
export async function deleteExpiredKeys(db: Queryable, limit: number): Promise<number> {
  const rows = await modifyReturning(
    db,
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1) RETURNING 1`,
    [limit],
  );
  return rows.length;
}
