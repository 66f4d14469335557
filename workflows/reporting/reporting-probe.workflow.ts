import { proxyActivities } from '@temporalio/workflow';
import type { ProbeActivities } from '../../activities/reporting/probe.activity';
import type { ProbeInput, ProbeOutput } from '../../domain/reporting/probes';
import { RETRY } from '../shared/retry-policies';

export interface ReportingProbeInput extends ProbeInput {
  /** `<prefix>-query`: where probeDatasource runs (the query worker role). */
  queryTaskQueue: string;
  /** The probe's own deadline: the runner's deadlines fit within it; the API waits a little longer. */
  timeoutMs: number;
}

/**
 * One call of the API into a tenant's datasource (a connection test, a schema discovery, a query
 * preview), id `reporting-probe-<uuid>`: one attempt of `probeDatasource` on the query task queue
 * (activities/reporting/probe.activity.ts), its answer the workflow's result. Nothing is retried:
 * the person who asked waits for the answer, and asks again if they want to. The API terminates the
 * workflow when its own deadline passes (platform/reporting-probes.ts).
 */
export async function reportingProbeWorkflow(input: ReportingProbeInput): Promise<ProbeOutput> {
  const { queryTaskQueue, timeoutMs, ...probe } = input;
  const { probeDatasource } = proxyActivities<ProbeActivities>({
    taskQueue: queryTaskQueue,
    scheduleToCloseTimeout: timeoutMs,
    heartbeatTimeout: '10 seconds',
    retry: RETRY.reportingProbe,
  });
  return probeDatasource(probe);
}
