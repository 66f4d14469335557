/**
 * The product's workflows, each changed without a patch, for the replay test's proof that such a change
 * fails CI in every workflow type (tests/integration/workflows/replay.test.ts): every workflow now sleeps
 * a second before it begins, a first command that no recorded history has. The replay of each type's
 * histories against this bundle must end in a determinism error.
 */
import { sleep } from '@temporalio/workflow';
import * as w from '../../../workflows';

function changed<A extends unknown[], R>(original: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    await sleep(1000);
    return original(...args);
  };
}

export const sendAccountEmailWorkflow = changed(w.sendAccountEmailWorkflow);
export const deleteAccountWorkflow = changed(w.deleteAccountWorkflow);
export const sendInvitationEmailWorkflow = changed(w.sendInvitationEmailWorkflow);
export const generateDocumentWorkflow = changed(w.generateDocumentWorkflow);
export const generateBatchWorkflow = changed(w.generateBatchWorkflow);
export const mergeDocumentWorkflow = changed(w.mergeDocumentWorkflow);
export const documentMaintenanceWorkflow = changed(w.documentMaintenanceWorkflow);
export const maintenanceWorkflow = changed(w.maintenanceWorkflow);
export const deliverWebhookWorkflow = changed(w.deliverWebhookWorkflow);
export const flowRunWorkflow = changed(w.flowRunWorkflow);
export const flowReviewDigestWorkflow = changed(w.flowReviewDigestWorkflow);
export const reportRunWorkflow = changed(w.reportRunWorkflow);
export const deliverReportWorkflow = changed(w.deliverReportWorkflow);
export const scheduledReportWorkflow = changed(w.scheduledReportWorkflow);
export const reportJobRunWorkflow = changed(w.reportJobRunWorkflow);
export const reportingProbeWorkflow = changed(w.reportingProbeWorkflow);
export const renderPreviewWorkflow = changed(w.renderPreviewWorkflow);
