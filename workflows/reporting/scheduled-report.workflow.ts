import { ChildWorkflowFailure, defineSearchAttributeKey, SearchAttributeType, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { executeChild, proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities } from '../../activities/reporting/schedule.activity';
import { workflowIds } from '../../domain/temporal-names';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../shared/search-attributes';
import { RETRY } from '../shared/retry-policies';
import { reportRunWorkflow } from './report-run.workflow';
import { reportJobRunWorkflow, type ReportJobRunInput } from './report-job-run.workflow';
import type { JobRunActivities } from '../../activities/reporting/job-run.activity';

export interface ScheduledReportInput {
  scheduleId: string;
  /** For the child `reportRunWorkflow`. */
  queryTaskQueue: string;
  renderTaskQueue: string;
}

/** Set by Temporal on every workflow a schedule starts (a trigger included): the fire time it stands for. */
const SCHEDULED_START = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

const { openScheduledRun } = proxyActivities<ScheduleActivities>({ startToCloseTimeout: '1 minute', retry: RETRY.reportBookkeeping });
const { openScheduledJobRun } = proxyActivities<JobRunActivities>({ startToCloseTimeout: '1 minute', retry: RETRY.reportBookkeeping });

/**
 * One fire of a report schedule (docs/reporting.md "Scheduling", "Temporal workflows"), started by the
 * Temporal Schedule `report-schedule-<scheduleId>` as `report-schedule-<scheduleId>-<time>`. Opens
 * the occurrence's run (or records a `skipped` duplicate, or a `failed` run that could not open),
 * then runs `report-run-<runId>` as a child and waits for it: while it runs, this workflow is the
 * schedule's running action, so overlap SKIP keeps a slow run from overlapping the next fire.
 */
export async function scheduledReportWorkflow(input: ScheduledReportInput): Promise<{ outcome: string; runId?: string }> {
  const info = workflowInfo();
  const scheduledFor = info.typedSearchAttributes.get(SCHEDULED_START) ?? info.runStartTime;
  const opened = await openScheduledRun({ scheduleId: input.scheduleId, scheduledFor: scheduledFor.toISOString(), runId: uuid4(), duplicateRunId: uuid4() });
  switch (opened.outcome) {
    case 'gone':
      return { outcome: 'gone' };
    case 'skipped':
    case 'failed':
      return { outcome: opened.outcome, runId: opened.runId };
    case 'job':
      return runScheduledJob(input, opened);
    case 'run':
      break;
  }
  try {
    await executeChild(reportRunWorkflow, {
      workflowId: workflowIds.reportRun(opened.runId),
      args: [{ runId: opened.runId, queryTaskQueue: input.queryTaskQueue, renderTaskQueue: input.renderTaskQueue, deliveryRetryDelaysMs: opened.deliveryRetryDelaysMs }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      // A schedule's action carries no fairness key (the SDK's schedule options take none): the run gets its project's here.
      priority: { fairnessKey: opened.projectId },
      typedSearchAttributes: [
        { key: SA_KIND, value: 'report-run' },
        { key: SA_ENTITY_ID, value: opened.runId },
        { key: SA_PROJECT_ID, value: opened.projectId },
      ],
    });
  } catch (err) {
    // A run cancelled from the API (or terminated) ends its child; the run record says what happened.
    if (err instanceof ChildWorkflowFailure) return { outcome: 'run-ended', runId: opened.runId };
    // The maintenance sweep started the queued run first (a worker stalled here past its threshold): it runs there.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'run-started-elsewhere', runId: opened.runId };
    throw err;
  }
  return { outcome: 'run', runId: opened.runId };
}

/**
 * A job target: the occurrence's job run (or a `skipped` duplicate), run as the child
 * `report-job-run-<jobRunId>` and waited for, like a report's run.
 */
async function runScheduledJob(input: ScheduledReportInput, opened: { occurrenceKey: string }): Promise<{ outcome: string; jobRunId?: string }> {
  const info = workflowInfo();
  const scheduledFor = info.typedSearchAttributes.get(SCHEDULED_START) ?? info.runStartTime;
  const job = await openScheduledJobRun({ scheduleId: input.scheduleId, scheduledFor: scheduledFor.toISOString(), occurrenceKey: opened.occurrenceKey, jobRunId: uuid4(), duplicateJobRunId: uuid4() });
  if (job.outcome !== 'job-run') return job;
  const args: [ReportJobRunInput] = [{ jobRunId: job.jobRunId, queryTaskQueue: input.queryTaskQueue, renderTaskQueue: input.renderTaskQueue, deliveryRetryDelaysMs: job.deliveryRetryDelaysMs }];
  try {
    await executeChild(reportJobRunWorkflow, {
      workflowId: workflowIds.reportJobRun(job.jobRunId),
      args,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      priority: { fairnessKey: job.projectId },
      typedSearchAttributes: [
        { key: SA_KIND, value: 'report-job-run' },
        { key: SA_ENTITY_ID, value: job.jobRunId },
        { key: SA_PROJECT_ID, value: job.projectId },
      ],
    });
  } catch (err) {
    // A job run cancelled from the API ends its child; its record says what happened.
    if (err instanceof ChildWorkflowFailure) return { outcome: 'job-run-ended', jobRunId: job.jobRunId };
    throw err;
  }
  return { outcome: 'job-run', jobRunId: job.jobRunId };
}
