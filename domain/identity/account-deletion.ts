/** Input of deleteAccountWorkflow, started by DELETE /api/users/me and by the maintenance sweep. */
export interface AccountDeletionInput {
  userId: string;
  /** ACCOUNT_DELETION_GRACE_SECONDS at the time of the request (30 days by default). */
  graceSeconds: number;
}
