/**
 * The workflows as a worker polling as a Worker Deployment version registers them
 * (TEMPORAL_WORKER_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID set; docs/operations.md "Deploying new code"): each
 * type with its own versioning behaviour. Unversioned workers (development, tests) load workflows/index.ts, where no
 * behaviour is set (the SDK refuses one without deployment options).
 *
 * - **Pinned**: the types whose runs end within minutes (documents, previews, e-mails, report runs,
 *   deliveries, whose retry schedules span minutes). A run finishes on the code it started with, so their
 *   changes need no patch; the old version's workers drain in minutes.
 * - **Auto-upgrade**: the long waiters (an account deletion's 30-day grace period, a Flow run waiting for
 *   its approvers, a gate's review digest, which lives as long as runs keep entering review). They move to
 *   the new version at their next task, so their changes follow the patch rule (docs/architecture.md
 *   "Changing workflow code") and no old worker has to stay up for them.
 * - **Batches** are pinned and move to the current version when they continue as new (each chunk's run
 *   starts on it: workflows/documents/generate-batch.workflow.ts).
 */
import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions } from '@temporalio/workflow';
import * as workflows from './index';
import { markVersioned } from './shared/versioning';

export const VERSIONING_BEHAVIOURS: Record<keyof typeof workflows, VersioningBehavior> = {
  sendAccountEmailWorkflow: 'PINNED',
  deleteAccountWorkflow: 'AUTO_UPGRADE',
  sendInvitationEmailWorkflow: 'PINNED',
  generateDocumentWorkflow: 'PINNED',
  generateBatchWorkflow: 'PINNED',
  mergeDocumentWorkflow: 'PINNED',
  documentMaintenanceWorkflow: 'PINNED',
  maintenanceWorkflow: 'PINNED',
  deliverWebhookWorkflow: 'PINNED',
  flowRunWorkflow: 'AUTO_UPGRADE',
  flowReviewDigestWorkflow: 'AUTO_UPGRADE',
  reportRunWorkflow: 'PINNED',
  deliverReportWorkflow: 'PINNED',
  scheduledReportWorkflow: 'PINNED',
  reportJobRunWorkflow: 'PINNED',
  reportingProbeWorkflow: 'PINNED',
  renderPreviewWorkflow: 'PINNED',
};

markVersioned();
for (const [name, behaviour] of Object.entries(VERSIONING_BEHAVIOURS)) {
  setWorkflowOptions({ versioningBehavior: behaviour }, workflows[name as keyof typeof workflows] as (...args: never[]) => Promise<unknown>);
}

export * from './index';
