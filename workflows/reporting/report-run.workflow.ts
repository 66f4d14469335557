import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { ReportRunActivities, PlannedAgentQuery, PlannedDataset } from '../../activities/reporting/report-run.activity';
import type { RunAgentQueryInput } from '../../activities/reporting/run-agent-query.activity';
import type { RenderReportInput, RenderedReportOutput } from '../../activities/reporting/render-report.activity';
import type { RunDirectQueryInput, RunDirectQueryResult } from '../../activities/reporting/run-direct-query.activity';
import type { RunDataset } from '../../domain/reporting/run-status';
import { RETRY } from '../shared/retry-policies';
import { deliverOutputs } from './deliver-report.workflow';

export interface ReportRunInput {
  runId: string;
  /** `<prefix>-query`: runDirectQuery. */
  queryTaskQueue: string;
  /** `<prefix>-render`: renderReportOutputs. */
  renderTaskQueue: string;
  /** REPORT_DELIVERY_RETRY_DELAYS (absent in histories from before channels: the default). */
  deliveryRetryDelaysMs?: number[];
}

const bookkeeping = proxyActivities<ReportRunActivities>({ startToCloseTimeout: '1 minute', retry: RETRY.reportBookkeeping });

/** An activity's error as the run record shows it: the catalogued code (the failure's type) and its message. */
function errorOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type && /^ERR_/.test(cause.type) ? cause.type : 'ERR_INTERNAL_001', message: cause.message };
  return { code: 'ERR_INTERNAL_001', message: cause instanceof Error ? cause.message : 'The step failed' };
}

/**
 * One report run (docs/reporting.md "Runs", "How the parts fit", "Temporal workflows"), id `report-run-<runId>`: the
 * plan (the pinned report version, each dataset's query compiled with the run's values), every
 * dataset's query on the query task queue at once, their results stored as gzip NDJSON and never
 * passed through Temporal, then the outputs rendered on the render task queue and recorded. Every
 * status move is a bookkeeping activity (db/reporting/run-state.ts), so a cancel from the API that
 * got there first wins. A failed query fails the run at `query`, a failed render at `render` (with
 * the quota's or the template's code). A run with channels then delivers its files to every channel
 * target (deliver-report.workflow.ts) and ends `completed`, or `failed` at `delivery` when a
 * delivery failed after its retries. Cancelling the workflow cancels what runs and ends the run
 * `cancelled`.
 */
export async function reportRunWorkflow(input: ReportRunInput): Promise<void> {
  const { runId } = input;
  let stage: 'query' | 'render' | 'delivery' = 'query';
  try {
    const plan = await bookkeeping.prepareReportRun({ runId });
    if (!plan) return;

    const results = await Promise.allSettled(plan.datasets.map((d) => runDataset(input, plan.projectId, d)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      if (isCancellation(failed.reason)) throw failed.reason;
      const agentFailed = plan.datasets[results.indexOf(failed)]?.agent;
      await bookkeeping.failReportRun({ runId, stage: 'query', error: agentFailed ? agentErrorOf(failed.reason) : errorOf(failed.reason) });
      return;
    }
    const done = (results as Array<PromiseFulfilledResult<RunDirectQueryResult>>).map((r) => r.value);
    if (plan.skipIfEmpty && plan.trigger === 'schedule' && done.every((r) => r.rowCount === 0)) {
      await bookkeeping.skipReportRun({ runId, reason: 'empty' });
      return;
    }

    stage = 'render';
    const rendering = await bookkeeping.startReportRender({ runId });
    if (!rendering) return;
    const { renderReportOutputs } = proxyActivities<{ renderReportOutputs(i: RenderReportInput): Promise<{ outputs: RenderedReportOutput[] }> }>({
      taskQueue: input.renderTaskQueue,
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: '30 seconds',
      retry: RETRY.reportRender,
    });
    const { outputs } = await renderReportOutputs({
      projectId: plan.projectId,
      runId,
      runShortId: plan.runShortId,
      reportId: plan.reportId,
      reportVersion: plan.reportVersion,
      parameters: plan.parameters,
      scheduledFor: plan.scheduledFor,
      timezone: plan.timezone,
      datasets: plan.datasets.map((d, i) => ({ name: d.name, key: done[i].key, rowCount: done[i].rowCount, columns: done[i].columns })),
      formats: plan.formats,
      watermark: rendering.watermark,
    });
    const ended = await bookkeeping.completeReportRun({ runId, outputs });
    if (ended !== 'delivering') return;
    stage = 'delivery';
    await deliverOutputs({ runId }, plan.projectId, input.deliveryRetryDelaysMs ?? []);
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => bookkeeping.cancelReportRun({ runId }));
      throw err;
    }
    await bookkeeping.failReportRun({ runId, stage, error: errorOf(err) });
  }
}

/** One dataset: its query on the query task queue, or through its agent; its progress on the run record. */
async function runDataset(input: ReportRunInput, projectId: string, d: PlannedDataset): Promise<RunDirectQueryResult> {
  const record = (dataset: Partial<RunDataset>) => bookkeeping.recordReportDataset({ runId: input.runId, dataset: { ...dataset, name: d.name } });
  await record({ status: 'running' });
  const query = { projectId, runId: input.runId, datasetName: d.name, datasourceId: d.datasourceId, compiled: d.compiled, limits: d.limits };
  try {
    const result = d.agent ? await runAgentQuery(d.agent, { ...query, agentId: d.agent.agentId }) : await runDirectQuery(input, query);
    await record({ status: 'completed', rowCount: result.rowCount, truncated: result.truncated, bytes: result.bytes, durationMs: result.durationMs, key: result.key, columns: result.columns });
    return result;
  } catch (err) {
    if (!isCancellation(err)) await record({ status: 'failed', error: d.agent ? agentErrorOf(err) : errorOf(err) });
    throw err;
  }
}

function runDirectQuery(input: ReportRunInput, query: RunDirectQueryInput): Promise<RunDirectQueryResult> {
  const { runDirectQuery: run } = proxyActivities<{ runDirectQuery(i: RunDirectQueryInput): Promise<RunDirectQueryResult> }>({
    taskQueue: input.queryTaskQueue,
    // The statement's own deadline ends it first (ERR_QRY_007); this only ends a worker that vanished.
    startToCloseTimeout: query.limits.timeoutMs + 30_000,
    heartbeatTimeout: '30 seconds',
    retry: RETRY.query,
  });
  return run(query);
}

/**
 * The agent's query (docs/reporting.md "Report runs through an agent"): the API heartbeats the activity while the agent
 * polls, so a silent agent times the attempt out after `heartbeatTimeoutMs` and the policy tries again on a new task.
 */
function runAgentQuery(agent: PlannedAgentQuery, query: RunAgentQueryInput): Promise<RunDirectQueryResult> {
  const { runAgentQuery: run } = proxyActivities<{ runAgentQuery(i: RunAgentQueryInput): Promise<RunDirectQueryResult> }>({
    startToCloseTimeout: agent.startToCloseTimeoutMs,
    heartbeatTimeout: agent.heartbeatTimeoutMs,
    retry: { ...RETRY.agentQuery, initialInterval: agent.retryDelayMs, maximumInterval: agent.retryDelayMs * 5 },
  });
  return run(query);
}

/** An agent query's error: a timed-out attempt (the agent offline or gone silent) is ERR_AGENT_012. */
function agentErrorOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return { code: 'ERR_AGENT_012', message: 'The agent did not answer in time: it is offline or lost the query' };
  return errorOf(err);
}
