import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import type { Scope } from './guards';

/**
 * No open relay (docs/security.md, "Uploads, output and mail"): a call that makes the service
 * e-mail third parties (Flow approvers: a gate's approvers, an approval-link re-send) needs a
 * verified account behind it. Whose verification counts: the caller's for a signed-in user (JWT);
 * for an API key, which has no person of its own, the owner of the key's project. Refused: 403
 * ERR_AUTH_006.
 */
export async function requireVerifiedSender(db: DataSource, scope: Scope, what: string): Promise<void> {
  const [row]: Array<{ verified: boolean }> = scope.userId
    ? await db.query(`SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1`, [scope.userId])
    : await db.query(`SELECT u.email_verified_at IS NOT NULL AS verified FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.id = $1`, [scope.projectId]);
  if (row?.verified) return;
  const whose = scope.userId ? 'your e-mail address' : "the project owner's e-mail address";
  throw new AppError('ERR_AUTH_006', `Verify ${whose} before ${what}`, { required: scope.userId ? 'caller' : 'project_owner' });
}
