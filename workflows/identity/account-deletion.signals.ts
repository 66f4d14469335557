import { defineSignal } from '@temporalio/workflow';

/**
 * Sent to the account-deletion workflow (id from workflowIds.accountDeletion) by POST
 * /api/auth/restore-account after it cleared the deletion in the database. Kept apart from the
 * workflow code so the API imports only the signal's definition.
 */
export const restoreAccountSignal = defineSignal('restore');
