import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import { randomBase62, sha256Hex } from '../../domain/signing';

/** Agent tokens (docs/reporting.md "Access"): `fmag_` + 43 base62 characters; only their SHA-256 is stored. */
const AGENT_TOKEN_PREFIX = 'fmag_';

export function looksLikeAgentToken(token: string): boolean {
  return token.startsWith(AGENT_TOKEN_PREFIX);
}

/** A new token with what is stored of it: the hash and the prefix shown in lists (`fmag_abcdefg...`). */
export function newAgentToken(): { token: string; hash: string; prefix: string } {
  const token = AGENT_TOKEN_PREFIX + randomBase62(43);
  return { token, hash: sha256Hex(token), prefix: `${token.slice(0, 12)}...` };
}

/**
 * One indexed query by the token's hash. A rotated token no longer matches any row and a
 * deactivated agent is refused here, so both stop on the very next request (docs/reporting.md "Agent tokens").
 */
export async function resolveAgentToken(db: DataSource, token: string): Promise<Principal & { kind: 'agent' }> {
  if (token.length > 100) throw new AppError('ERR_AGENT_002');
  const [row]: Array<{ id: string; project_id: string; is_active: boolean }> = await db.query(
    `SELECT a.id, a.project_id, a.is_active FROM reporting_agents a JOIN projects p ON p.id = a.project_id AND p.deleted_at IS NULL WHERE a.token_hash = $1`,
    [sha256Hex(token)],
  );
  if (!row) throw new AppError('ERR_AGENT_002');
  if (!row.is_active) throw new AppError('ERR_AGENT_003');
  return { kind: 'agent', agentId: row.id, projectId: row.project_id };
}
