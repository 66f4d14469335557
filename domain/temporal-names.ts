/**
 * Task queues and workflow ids in one place. Workflow ids are the product's ids, so an operator
 * who has a jobId or runId from a customer pastes it straight into the Temporal Web UI.
 */
export function taskQueues(prefix: string) {
  return {
    /** Orchestration and light activities (database, mail, webhooks). */
    main: `${prefix}-main`,
    /** Browser and workbook rendering: its own queue so render concurrency is bounded per worker. */
    render: `${prefix}-render`,
  };
}
export type TaskQueues = ReturnType<typeof taskQueues>;

export const workflowIds = {
  accountEmail: (emailId: string) => `account-email-${emailId}`,
  /** The verification e-mail of a sign-up: one per user, so a restart by the maintenance sweep never sends it twice. */
  signupEmail: (userId: string) => `account-email-signup-${userId}`,
  accountDeletion: (userId: string) => `account-deletion-${userId}`,
  teamInvitation: (invitationId: string) => `team-invitation-${invitationId}`,
  /** One delivery's schedule (first attempt and its retries). */
  webhookDelivery: (deliveryId: string) => `webhook-delivery-${deliveryId}`,
  /** The n-th manual retry of a delivery: a new run, so the first one's history stays readable. */
  webhookDeliveryRetry: (deliveryId: string, n: number) => `webhook-delivery-${deliveryId}-retry-${n}`,
  /** A Flow run's workflow: the run id itself (contract §5), so a runId pastes straight into the Web UI. */
  flowRun: (runId: string) => runId,
};
