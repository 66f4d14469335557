/** Input of deleteAccountWorkflow, started by DELETE /api/users/me and by the maintenance sweep. */
export interface AccountDeletionInput {
  userId: string;
  /** ACCOUNT_DELETION_GRACE_SECONDS at the time of the request (30 days by default), less what passed before the start. */
  graceSeconds: number;
  /**
   * The request this run serves (`deletionRequestToken`): the purge happens only while the account's
   * pending deletion is still this request. Absent in runs started before requests were tied to their run.
   */
  requestToken?: string;
}

/**
 * A deletion request, sent to the account's deletion run with signal-with-start
 * (platform/workflow-starts.ts `startAccountDeletion`): a run still waiting on an older request's
 * timer (its restore signal never arrived) takes the new request's grace period instead of purging
 * on the old one; the same request sent twice (the API and the outbox sweep) changes nothing.
 */
export interface DeletionRequest {
  requestToken: string;
  /** ISO time of the end of this request's grace period. */
  purgeAt: string;
}

/** SQL of a user row's request token: its `deletion_requested_at` to the microsecond, in UTC. */
export const DELETION_REQUEST_TOKEN_SQL = `to_char(deletion_requested_at AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS.US')`;
