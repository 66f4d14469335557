import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities, JobOutcome } from '../../activities/documents';
import type { MergeJobActivities } from '../../activities/documents/merge-job.activity';
import { RETRY } from '../shared/retry-policies';
import { deliverDocumentEvent } from '../webhooks/dispatch-deliveries';
import { catalogued, failureMessage, type JobWorkflowOptions } from './process-job';

interface MergeDocumentInput extends JobWorkflowOptions {
  jobId: string;
  projectId: string;
}

const bookkeeping = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

/**
 * A merge job (POST /api/documents/merge; the workflow id is the job id): the parts joined on the
 * render queue (activities/documents/merge-job.activity.ts), then the outcome announced
 * (document.generated or document.failed, like a generation's). Whatever the end, completed,
 * failed or cancelled, the merge's uploaded PDFs are removed. Cancelling the workflow cancels the job.
 */
export async function mergeDocumentWorkflow(input: MergeDocumentInput): Promise<JobOutcome> {
  const render = { taskQueue: input.renderTaskQueue };
  const { mergeJob } = proxyActivities<MergeJobActivities>({ ...render, startToCloseTimeout: '5 minutes', heartbeatTimeout: '15 seconds', retry: RETRY.documentRender });
  const { discardMergeUploads } = proxyActivities<MergeJobActivities>({ ...render, startToCloseTimeout: '1 minute', retry: RETRY.documentBookkeeping });
  let outcome: JobOutcome;
  try {
    outcome = await mergeJob({ jobId: input.jobId });
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        await bookkeeping.markJobCancelled({ jobId: input.jobId });
        await discardMergeUploads({ jobId: input.jobId, projectId: input.projectId });
      });
      throw err;
    }
    outcome = await bookkeeping.markJobFailed({ jobId: input.jobId, message: failureMessage(err).replace(/^Rendering/, 'Merging'), ...catalogued(err) });
  }
  await discardMergeUploads({ jobId: input.jobId, projectId: input.projectId });
  const deliveryIds = await bookkeeping.prepareJobEvent({ jobId: input.jobId });
  await deliverDocumentEvent(deliveryIds, input.webhookRetryDelaysMs);
  return outcome;
}
