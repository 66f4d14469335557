import { Context } from '@temporalio/activity';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type { SqlConnectionConfig } from '../../domain/reporting/query-runner';
import { probeResultKey, type ProbeInput, type ProbeOutput, type ProbeTarget } from '../../domain/reporting/probes';
import { unsealSecret } from '../../domain/secret-box';
import { createOutboundGuard } from '../../adapters/http/outbound';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { createQueryRunner } from '../../adapters/query-runners/runners';
import { withHeartbeat } from '../heartbeat';

/**
 * `probeDatasource`, the query task queue's answer to the API's reporting calls that reach a
 * tenant's datasource (docs/reporting.md "Where datasource calls run"): a connection test, a
 * schema discovery, a query preview. They run here, in the query worker role, beside report runs
 * and under the same caps, never in the process that serves HTTP. The API starts a
 * `reportingProbeWorkflow` and waits for it with a deadline (platform/reporting-probes.ts).
 *
 * The target (kind, settings and secrets, saved or not yet saved) travels sealed with the
 * service's at-rest key (ENCRYPTION_KEY, domain/secret-box.ts), as the datasource's row holds it:
 * no credential is readable in a Temporal payload. Results larger than a payload (a preview's rows,
 * a schema) are written to artefact storage under `probeResultKey`; the API reads them once and
 * deletes them.
 */
export interface ProbeActivityDeps {
  storage: ArtefactStorage;
  outboundAllowlist: string[];
  evaluator?: Evaluator;
}

/** Heartbeats carry the workflow's cancellation (an API that gave up terminates it). */
const HEARTBEAT_MS = 2000;

export function createProbeActivities(deps: ProbeActivityDeps) {
  const guard = createOutboundGuard(deps.outboundAllowlist);
  return {
    async probeDatasource(input: ProbeInput): Promise<ProbeOutput> {
      const target = JSON.parse(unsealSecret(input.sealedTarget)) as ProbeTarget;
      const runner = createQueryRunner({
        kind: target.kind as never,
        config: target.config as unknown as SqlConnectionConfig,
        secrets: target.secrets,
        guard,
        evaluator: deps.evaluator,
        tenant: input.projectId,
        storage: deps.storage,
        datasourceId: target.datasourceId,
      });
      const ctx = Context.current();
      return withHeartbeat(() => ctx.heartbeat(), HEARTBEAT_MS, async () => {
        const key = probeResultKey(input.projectId, input.probeId);
        try {
          if (input.op === 'test') return { op: 'test', test: await runner.test() };
          if (input.op === 'schema') {
            const schema = await runner.discoverSchema();
            await deps.storage.put(key, Buffer.from(JSON.stringify(schema)), 'application/json');
            return { op: 'schema', key };
          }
          if (!input.compiled || !input.limits) throw new AppError('ERR_VALID_001', 'A run probe needs the compiled query and its limits');
          // Bounded by limits.maxBytes (the NDJSON writer stops there): a preview's few megabytes.
          const lines: string[] = [];
          const summary = await runner.run(input.compiled, input.limits, { write: async (line) => void lines.push(line) }, ctx.cancellationSignal);
          await deps.storage.put(key, Buffer.from(lines.join('')), 'application/x-ndjson');
          return { op: 'run', key, summary };
        } finally {
          await runner.close().catch(() => undefined);
        }
      });
    },
  };
}

export type ProbeActivities = ReturnType<typeof createProbeActivities>;
