import type { DataSource } from 'typeorm';
import { modifyReturning } from '../../db/sql';
import { invitationEmail } from '../../domain/identity/invitation-email';
import { randomToken, sha256Hex } from '../../domain/signing';
import type { Mailer } from '../../adapters/mail/mailer';
import type { InvitationEmailInput } from '../../workflows/identity/team-invitation.workflow';

export interface InvitationEmailDeps {
  db: DataSource;
  mailer: Mailer;
  publicUrl: string;
}

interface Row {
  id: string;
  email: string;
  role: string;
  expires_at: Date;
  project_name: string;
  inviter_name: string | null;
}

export function createInvitationEmailActivity(deps: InvitationEmailDeps) {
  return async function sendInvitationEmail(input: InvitationEmailInput): Promise<void> {
    const token = randomToken(32);
    // Minting and storing the hash in one conditional UPDATE: an invitation cancelled, decided or
    // expired before the worker got to it is simply not sent. A retry after a lost reply mints a
    // fresh token, so only the last e-mail's link works; that is the one the invitee will see last.
    const rows = await modifyReturning<Row>(
      deps.db,
      `UPDATE invitations i SET token_hash = $2
         FROM projects p
        WHERE i.id = $1 AND i.status = 'pending' AND i.expires_at > now()
          AND p.id = i.project_id AND p.deleted_at IS NULL
        RETURNING i.id, i.email, i.role, i.expires_at, p.name AS project_name,
                  (SELECT u.name FROM users u WHERE u.id = i.invited_by) AS inviter_name`,
      [input.invitationId, sha256Hex(token)],
    );
    const inv = rows[0];
    if (!inv) return;
    const link = `${deps.publicUrl}/invitations/${inv.id}?token=${encodeURIComponent(token)}`;
    await deps.mailer.send(
      invitationEmail({ to: inv.email, projectName: inv.project_name, role: inv.role, inviterName: inv.inviter_name, link, expiresAt: new Date(inv.expires_at) }),
    );
  };
}
