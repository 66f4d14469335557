import { ActivityFailure, ApplicationFailure, CancellationScope, executeChild, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { JobRunActivities } from '../../activities/reporting/job-run.activity';
import { workflowIds } from '../../domain/temporal-names';
import { RETRY } from '../shared/retry-policies';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../shared/search-attributes';
import { deliverOutputs } from './deliver-report.workflow';
import { reportRunWorkflow, type ReportRunInput } from './report-run.workflow';

export interface ReportJobRunInput {
  jobRunId: string;
  queryTaskQueue: string;
  renderTaskQueue: string;
  deliveryRetryDelaysMs?: number[];
}

const jobs = proxyActivities<JobRunActivities>({ startToCloseTimeout: '1 minute', retry: RETRY.reportBookkeeping });

/**
 * One run of a report job (docs/reporting.md "Jobs", "Statuses", "Temporal workflows"), id
 * `report-job-run-<jobRunId>`: each report runs as a child `report-run-<runId>`, at most
 * `concurrency` at once, in the job's order; with `stopOnFailure` a failed report starts no more.
 * Then one bundled delivery of every completed report's files (`delivery: bundle`), or none
 * (`separate`: each run delivered its own). Cancelling the workflow cancels the running reports.
 */
export async function reportJobRunWorkflow(input: ReportJobRunInput): Promise<void> {
  const { jobRunId } = input;
  try {
    const plan = await jobs.startJobRun({ jobRunId });
    if (!plan) return;
    let next = 0;
    let stopped = false;
    const lane = async () => {
      while (!stopped && next < plan.itemCount) {
        const index = next++;
        const opened = await jobs.openJobItemRun({ jobRunId, index });
        if ('runId' in opened) {
          const args: [ReportRunInput] = [{ runId: opened.runId, queryTaskQueue: input.queryTaskQueue, renderTaskQueue: input.renderTaskQueue, deliveryRetryDelaysMs: input.deliveryRetryDelaysMs }];
          try {
            await executeChild(reportRunWorkflow, {
              workflowId: workflowIds.reportRun(opened.runId),
              args,
              typedSearchAttributes: [
                { key: SA_KIND, value: 'report-run' },
                { key: SA_ENTITY_ID, value: opened.runId },
                { key: SA_PROJECT_ID, value: plan.projectId },
              ],
            });
          } catch (err) {
            // The run records its own end; only a cancellation of this job run stops the others.
            if (isCancellation(err)) throw err;
          }
        }
        const status = await jobs.finishJobItem({ jobRunId, index });
        if (status !== 'completed' && plan.stopOnFailure) stopped = true;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency, plan.itemCount)) }, lane));
    const ended = await jobs.concludeJobRun({ jobRunId, stopped });
    if (ended === 'delivering') await deliverOutputs({ jobRunId }, plan.projectId, input.deliveryRetryDelaysMs ?? []);
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => jobs.cancelJobRun({ jobRunId }));
      throw err;
    }
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const error = cause instanceof ApplicationFailure && cause.type && /^ERR_/.test(cause.type) ? { code: cause.type, message: cause.message } : { code: 'ERR_INTERNAL_001', message: 'The job run failed' };
    await jobs.failJobRun({ jobRunId, error });
  }
}
