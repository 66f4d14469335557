import { randomUUID } from 'node:crypto';
import { text } from 'node:stream/consumers';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ProbeInput, ProbeOutput, ProbeTarget } from '../../domain/reporting/probes';
import { AppError } from '../../domain/errors';
import type { DiscoveredSchema, QueryRunner } from '../../domain/reporting/query-runner';
import { sealSecret } from '../../domain/secret-box';
import { workflowIds } from '../../domain/temporal-names';
import type { RunnerTarget } from '../../adapters/query-runners/runner-target';
import type { Services } from '../../platform/services';
import { startWorkflow } from '../../platform/start-workflow';
import { awaitAnswer } from '../../platform/workflow-answer';
import { consumeOrRefuse, createLimiterFactory } from '../rate-limits';

/**
 * The API's way into a tenant's datasource (docs/reporting.md "Where datasource calls run"): a
 * QueryRunner whose test, schema discovery and run are each a `reportingProbeWorkflow` on the query
 * task queue, so the work, its memory and its sockets belong to the query worker role, never to the
 * process that serves HTTP. The API waits for the answer with a deadline of its own and ends the
 * workflow when it passes (ERR_QRY_007). At most REPORTING_PROBES_PER_PROJECT probes of one project
 * run at once (429 ERR_LIMIT_015; counted in Redis across replicas when REDIS_URL is set).
 */

/** Each probe's deadline: the runners' own (connect, statement and client deadlines) fit within it. */
const TEST_TIMEOUT_MS = 40_000;
const SCHEMA_TIMEOUT_MS = 60_000;
/** A run's: the query's timeout plus connecting and the client's grace. */
const RUN_EXTRA_MS = 30_000;
/** How much longer than the probe's deadline the API waits (workflow and activity tasks being picked up). */
const WAIT_EXTRA_MS = 15_000;

type ProbeServices = Pick<Services, 'temporal' | 'taskQueues' | 'config' | 'storage' | 'redis'>;

const limiters = new WeakMap<ProbeServices, RateLimiterAbstract>();

/** The per-project count of probes in flight: a point taken when one starts, given back when it ends (or after the longest deadline). */
function inFlight(services: ProbeServices): RateLimiterAbstract {
  let limiter = limiters.get(services);
  if (!limiter) {
    const longest = Math.ceil((services.config.reporting.queryTimeoutSeconds * 1000 + RUN_EXTRA_MS + WAIT_EXTRA_MS) / 1000);
    limiter = createLimiterFactory(services.redis, services.config.temporal.taskQueuePrefix)('reporting-probes', services.config.reporting.probesPerProject, longest);
    limiters.set(services, limiter);
  }
  return limiter;
}

async function probe(services: ProbeServices, input: Omit<ProbeInput, 'probeId'>, timeoutMs: number): Promise<ProbeOutput> {
  const limiter = inFlight(services);
  await consumeOrRefuse(limiter, input.projectId, 'ERR_LIMIT_015', `At most ${services.config.reporting.probesPerProject} datasource tests, schema refreshes and previews may run at once per project`);
  const probeId = randomUUID();
  const workflowId = workflowIds.reportingProbe(probeId);
  try {
    await startWorkflow(services.temporal, 'reportingProbeWorkflow', {
      taskQueue: services.taskQueues.main,
      workflowId,
      args: [{ ...input, probeId, queryTaskQueue: services.taskQueues.query, timeoutMs }],
      kind: 'reporting-probe',
      projectId: input.projectId,
      entityId: probeId,
    });
    const late = () => new AppError('ERR_QRY_007', `The datasource did not answer within ${Math.round((timeoutMs + WAIT_EXTRA_MS) / 1000)} s`);
    return await awaitAnswer<ProbeOutput>(services.temporal, workflowId, timeoutMs + WAIT_EXTRA_MS, late);
  } finally {
    await limiter.reward(input.projectId, 1).catch(() => undefined);
  }
}

/** Reads a probe's stored result once and deletes it. */
async function takeResult(services: ProbeServices, key: string): Promise<string> {
  try {
    return await text((await services.storage.get(key)).body);
  } finally {
    await services.storage.delete(key).catch(() => undefined);
  }
}

/** Runners for the API's datasource calls, each call a probe on the query task queue. */
export function probeRunners(services: ProbeServices): (target: RunnerTarget) => QueryRunner {
  return (target) => {
    const projectId = target.tenant;
    if (!projectId) throw new Error('probeRunners: the target names no project (tenant)');
    const sealed: ProbeTarget = { kind: target.kind, config: target.config, secrets: target.secrets, ...(target.datasourceId ? { datasourceId: target.datasourceId } : {}) };
    const sealedTarget = sealSecret(JSON.stringify(sealed));
    return {
      async test() {
        const out = await probe(services, { projectId, op: 'test', sealedTarget }, TEST_TIMEOUT_MS);
        if (out.op !== 'test') throw new Error('probe answered another operation');
        return out.test;
      },
      async discoverSchema() {
        const out = await probe(services, { projectId, op: 'schema', sealedTarget }, SCHEMA_TIMEOUT_MS);
        if (out.op !== 'schema') throw new Error('probe answered another operation');
        return JSON.parse(await takeResult(services, out.key)) as DiscoveredSchema;
      },
      async run(compiled, limits, sink) {
        const out = await probe(services, { projectId, op: 'run', sealedTarget, compiled, limits }, limits.timeoutMs + RUN_EXTRA_MS);
        if (out.op !== 'run') throw new Error('probe answered another operation');
        const ndjson = await takeResult(services, out.key);
        for (const line of ndjson.split('\n')) if (line) await sink.write(`${line}\n`);
        return out.summary;
      },
      async close() {
        // Nothing is held here: each call's connection lives and ends in the query worker.
      },
    };
  };
}
