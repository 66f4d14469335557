import type { DataSource } from 'typeorm';
import { UserEntity } from '../../db/identity/user.entity';
import { modifyReturning } from '../../db/sql';
import { DELETION_REQUEST_TOKEN_SQL } from '../../domain/identity/account-deletion';
import { accountDeletionEmail } from '../../domain/identity/account-deletion-email';
import type { Mailer } from '../../adapters/mail/mailer';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { purgeUserData, type PurgeSummary } from './account-purge';

export interface AccountDeletionDeps {
  db: DataSource;
  mailer: Mailer;
  storage: ArtefactStorage;
  publicUrl: string;
}

/**
 * The steps of the account-deletion workflow. The users row is the source of truth: the API sets
 * `pending` and clears it on restore; these steps only move `pending` on with conditional
 * updates, so a restore racing the end of the grace period has exactly one winner.
 */
export function createAccountDeletionActivities(deps: AccountDeletionDeps) {
  return {
    /** Sends the notice unless the account was restored (or purged) meanwhile. */
    async sendAccountDeletionNotice(input: { userId: string; purgeAt: string }): Promise<boolean> {
      const user = await deps.db.getRepository(UserEntity).findOneBy({ id: input.userId });
      if (!user || user.deletionStatus !== 'pending') return false;
      await deps.mailer.send(accountDeletionEmail(user, new Date(input.purgeAt), `${deps.publicUrl}/api/auth/restore-account`));
      return true;
    },

    /**
     * pending → purging. False when the account is no longer pending (restored in time), or its
     * pending deletion is another request than the run's (`requestToken`; runs from before tokens pass none).
     */
    async beginAccountPurge(input: { userId: string; requestToken?: string }): Promise<boolean> {
      const rows = await modifyReturning<{ id: string }>(
        deps.db,
        `UPDATE users SET deletion_status = 'purging', updated_at = now()
          WHERE id = $1 AND deletion_status IN ('pending', 'purging') AND ($2::text IS NULL OR ${DELETION_REQUEST_TOKEN_SQL} = $2) RETURNING id`,
        [input.userId, input.requestToken ?? null],
      );
      return rows.length === 1;
    },

    async purgeAccount(input: { userId: string }): Promise<PurgeSummary> {
      return purgeUserData(deps.db, deps.storage, input.userId);
    },

    /** The workflow was cancelled (an operator stopping the deletion): the account is usable again. */
    async abandonAccountDeletion(input: { userId: string; requestToken?: string }): Promise<void> {
      await deps.db.query(
        `UPDATE users SET deletion_status = NULL, deletion_requested_at = NULL, deletion_reason = NULL, deletion_reason_text = NULL, updated_at = now()
          WHERE id = $1 AND deletion_status = 'pending' AND ($2::text IS NULL OR ${DELETION_REQUEST_TOKEN_SQL} = $2)`,
        [input.userId, input.requestToken ?? null],
      );
    },
  };
}
