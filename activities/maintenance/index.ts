/**
 * The maintenance schedule's activities that belong to no domain: the outbox backstop (the outbox
 * serves every domain: platform/workflow-outbox.ts), and the one activity of the retired
 * `documentMaintenanceWorkflow` that swept several domains at once. Each domain's own sweeps are
 * in its folder: activities/documents (`expireArtefacts`, `restartStrandedDocuments`),
 * activities/flow (`expireFlowArtefacts`), activities/identity/account-maintenance.activity.ts,
 * activities/reporting/report-maintenance.activity.ts (and `reconcileReportSchedules`),
 * activities/idempotency.
 */

export interface MaintenanceActivityDeps {
  /**
   * Starts every outbox mark older than `olderThanMs` (platform/workflow-outbox.ts `sweep`, what
   * every worker also runs every 30 s); resolves to how many it started.
   */
  sweepOutbox: (olderThanMs: number) => Promise<number>;
  /** The domains' backstops that `restartStrandedWork` runs in turn (the registered activities themselves). */
  restartStrandedDocuments: (input: { olderThanSeconds: number }) => Promise<number>;
  restartStrandedAccounts: (input: { olderThanSeconds: number; deletionGraceSeconds: number }) => Promise<number>;
}

export function createMaintenanceActivities(deps: MaintenanceActivityDeps) {
  const sweepWorkflowOutbox = async (input: { olderThanSeconds: number }): Promise<number> => deps.sweepOutbox(input.olderThanSeconds * 1000);
  return {
    /** The outbox backstop: marks older than `olderThanSeconds` (a crashed API replica's, if no worker swept them yet). */
    sweepWorkflowOutbox,

    /**
     * The retired `documentMaintenanceWorkflow`'s backstop (workflows/documents/maintenance.workflow.ts),
     * registered under its name while that type is (docs/operations.md "Retiring the old maintenance
     * workflow"): the outbox sweep, then documents' and identity's stranded work, as one activity
     * did before the sweeps moved to their domains. Returns how many were started or ended.
     */
    async restartStrandedWork(input: { olderThanSeconds: number; deletionGraceSeconds: number }): Promise<number> {
      let handled = await sweepWorkflowOutbox({ olderThanSeconds: input.olderThanSeconds });
      handled += await deps.restartStrandedDocuments({ olderThanSeconds: input.olderThanSeconds });
      handled += await deps.restartStrandedAccounts(input);
      return handled;
    },
  };
}
export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
