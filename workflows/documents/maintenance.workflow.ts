import { proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities } from '../../activities/documents';
import type { FlowActivities } from '../../activities/flow';
import { RETRY } from '../shared/retry-policies';

const { expireArtefacts, restartStrandedWork } = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '5 minutes',
  retry: RETRY.maintenance,
});
const { expireFlowArtefacts } = proxyActivities<FlowActivities>({ startToCloseTimeout: '5 minutes', retry: RETRY.maintenance });

export interface MaintenanceInput {
  retentionSeconds: number;
  /** Queued work older than this without a running workflow is started again. */
  strandedAfterSeconds: number;
  /** ACCOUNT_DELETION_GRACE_SECONDS, so a restarted deletion keeps its original purge date. */
  deletionGraceSeconds: number;
}

/**
 * Run by a Temporal schedule (`formwork-maintenance`): removes artefacts past the retention period
 * (document artefacts, and Flow run artefacts past their plan's retention) and restarts accepted
 * work whose workflow never started.
 */
export async function documentMaintenanceWorkflow(input: MaintenanceInput): Promise<{ expired: number; restarted: number }> {
  let expired = 0;
  for (;;) {
    const n = await expireArtefacts({ olderThanSeconds: input.retentionSeconds, limit: 500 });
    expired += n;
    if (n < 500) break;
  }
  // Flow run artefacts: retention by the project's plan (3 or 5 days), not DOCUMENT_RETENTION_SECONDS.
  for (;;) {
    const n = await expireFlowArtefacts({ limit: 500 });
    expired += n;
    if (n < 500) break;
  }
  const restarted = await restartStrandedWork({ olderThanSeconds: input.strandedAfterSeconds, deletionGraceSeconds: input.deletionGraceSeconds });
  return { expired, restarted };
}
