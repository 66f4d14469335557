import { defineSignal } from '@temporalio/workflow';
import type { DeletionRequest } from '../../domain/identity/account-deletion';
import { signalNames } from '../../domain/temporal-names';

/**
 * Sent to the account-deletion workflow (id from workflowIds.accountDeletion) by POST
 * /api/auth/restore-account after it cleared the deletion in the database. Kept apart from the
 * workflow code so the API imports only the signal's definition.
 */
export const restoreAccountSignal = defineSignal('restore');

/** A deletion request, signal-with-start (domain/identity/account-deletion.ts `DeletionRequest`). */
export const deletionRequestedSignal = defineSignal<[DeletionRequest]>(signalNames.deletionRequested);
