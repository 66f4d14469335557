/** Every workflow the worker registers; bundled for the worker's sandbox. */
export { sendAccountEmailWorkflow } from './identity/account-email.workflow';
export { deleteAccountWorkflow } from './identity/account-deletion.workflow';
export { sendInvitationEmailWorkflow } from './identity/team-invitation.workflow';
export { generateDocumentWorkflow } from './documents/generate-document.workflow';
export { generateBatchWorkflow } from './documents/generate-batch.workflow';
export { mergeDocumentWorkflow } from './documents/merge-document.workflow';
// Retired: registered until its last run has ended (docs/operations.md "Retiring the old maintenance workflow").
export { documentMaintenanceWorkflow } from './documents/maintenance.workflow';
export { maintenanceWorkflow } from './maintenance/maintenance.workflow';
export { deliverWebhookWorkflow } from './webhooks/deliver-webhook.workflow';
export { flowRunWorkflow } from './flow/flow-run.workflow';
export { flowReviewDigestWorkflow } from './flow/review-digest.workflow';
export { reportRunWorkflow } from './reporting/report-run.workflow';
export { deliverReportWorkflow } from './reporting/deliver-report.workflow';
export { scheduledReportWorkflow } from './reporting/scheduled-report.workflow';
export { reportJobRunWorkflow } from './reporting/report-job-run.workflow';
export { reportingProbeWorkflow } from './reporting/reporting-probe.workflow';
export { renderPreviewWorkflow } from './documents/render-preview.workflow';
