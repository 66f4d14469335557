import type { DataSource } from 'typeorm';
import { GateEntity } from '../../db/flow/gate.entity';
import type { ApprovalConfig, RenderMode } from '../../domain/flow/gate-settings';
import { recordRunOutcome, type RunOutcome } from '../../db/flow/gate-circuit';
import { RunEntity } from '../../db/flow/run.entity';
import { expiredRunArtefacts, finishRunDeliveries, markArtefactExpired } from '../../db/flow/run-lifecycle';
import { refundRunDocument } from '../../db/flow/run-billing';
import { moveRun, type RunMove } from '../../db/flow/run-state';
import { prepareEventDeliveries } from '../../db/webhooks/deliveries';
import { FLOW_PLANS } from '../../domain/flow/plans';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { createFlowRenderApiActivity } from './flow-render.activity';

export interface FlowActivityDeps {
  db: DataSource;
  storage: ArtefactStorage;
  /** OUTBOUND_ALLOWLIST: private hosts a custom render API may live on. */
  outboundAllowlist: string[];
  /** CUSTOM_RENDER_MAX_BYTES: the largest answer read from a custom render API (ERR_LIMIT_010). */
  customRenderMaxBytes?: number;
  /** Lifetime of the signed `artefactUrl` sent in `flow.run.completed` (DOWNLOAD_URL_TTL_SECONDS). */
  downloadUrlTtlSeconds?: number;
  /** Told when a run's outcome opened its gate's circuit breaker (the process's metrics, platform/metrics.ts). */
  onCircuitOpened?: () => void;
}

/** What the run workflow needs to know of its run and gate, read once when it starts. */
export interface FlowRunSnapshot {
  runId: string;
  projectId: string;
  gateId: string;
  status: string;
  renderMode: RenderMode;
  approvalMode: 'auto' | 'manual';
  approvalConfig: ApprovalConfig | null;
  deliveryChannelCount: number;
}

const FLOW_EVENT_TYPE = 'flow.run.completed';
const DEFAULT_URL_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Activities of the Flow run workflow (main task queue): the run record, the custom render API,
 * deliveries, the circuit breaker and retention. Native rendering runs on the render task queue
 * (flow-render.activity.ts, `renderFlowArtefact`).
 */
export function createFlowRunActivities(deps: FlowActivityDeps) {
  const runs = () => deps.db.getRepository(RunEntity);
  const gates = () => deps.db.getRepository(GateEntity);
  return {
    /** The run and its gate's lifecycle settings; null when the run no longer exists (deleted with its project). */
    async loadFlowRun(input: { runId: string }): Promise<FlowRunSnapshot | null> {
      const run = await runs().findOneBy({ id: input.runId });
      if (!run) return null;
      // Deleted gates keep their settings row (soft delete): an accepted run still finishes.
      const gate = await gates().findOneByOrFail({ id: run.gateId });
      return {
        runId: run.id,
        projectId: run.projectId,
        gateId: gate.id,
        status: run.status,
        renderMode: gate.renderMode,
        approvalMode: gate.approvalMode,
        approvalConfig: gate.approvalConfig,
        deliveryChannelCount: gate.deliveryChannels.length,
      };
    },

    /**
     * Moves the run's status with its approval/delivery status, error, completed_at (only the given
     * fields), when domain/flow/run-status.ts allows the move; a repeated move changes nothing.
     */
    async updateFlowRun(input: RunMove): Promise<void> {
      if (!input.finished) {
        await moveRun(deps.db, input);
        return;
      }
      // A run that ends without its document gets it back in the same transaction (db/flow/run-billing.ts); a retry finds nothing to give.
      await deps.db.transaction(async (m) => {
        await moveRun(m, input);
        await refundRunDocument(m, input.runId);
      });
    },

    callFlowRenderApi: createFlowRenderApiActivity({ ...deps, maxResponseBytes: deps.customRenderMaxBytes }),

    /**
     * Records the `flow.run.completed` deliveries, one per delivery channel of the gate (as the
     * gate is now), with the spec's body. Ids derive from the run and channel, so a retried
     * activity finds the same rows (and the body first written).
     */
    async prepareFlowDeliveries(input: { runId: string }): Promise<string[]> {
      const run = await runs().findOneByOrFail({ id: input.runId });
      const gate = await gates().findOneByOrFail({ id: run.gateId });
      const artefactUrl =
        run.artefactKey && !run.artefactExpiredAt
          ? (await deps.storage.signedUrl(run.artefactKey, { ttlSeconds: deps.downloadUrlTtlSeconds ?? DEFAULT_URL_TTL_SECONDS })).url
          : null;
      const timestamp = new Date().toISOString();
      const body = {
        event: FLOW_EVENT_TYPE,
        // The event announces the end of the run's work, so it says `completed`; the record itself
        // shows `delivering` until the receivers answered.
        run: { id: run.id, shortId: run.shortId, status: 'completed', inputPayload: run.inputPayload, artefactUrl },
        gate: { id: gate.id, name: gate.name, slug: gate.slug },
        timestamp,
      };
      return prepareEventDeliveries(deps.db, {
        projectId: run.projectId,
        source: 'flow',
        runId: run.id,
        event: { id: run.id, type: FLOW_EVENT_TYPE, timestamp, data: {} },
        body,
        targets: gate.deliveryChannels.map((c) => ({ url: c.url, secret: c.secret, headers: c.headers })),
      });
    },

    /** Ends the delivery step from the delivery records: `completed` when all succeeded, else `failed`. */
    async finishFlowDeliveries(input: { runId: string }): Promise<'completed' | 'failed'> {
      return finishRunDeliveries(deps.db, input.runId, deps.onCircuitOpened);
    },

    /** Render/delivery outcome of a run for its gate's circuit breaker (counted once per run). */
    async recordFlowRunOutcome(input: { runId: string; outcome: RunOutcome }): Promise<void> {
      if ((await recordRunOutcome(deps.db, input))?.opened) deps.onCircuitOpened?.();
    },

    /**
     * Retention (spec, Limits 7): removes artefacts stored longer ago than the project's plan
     * keeps them (Free 3 days, paid plans 5) and marks their runs, whose `artefactUrl` is then null.
     */
    async expireFlowArtefacts(input: { limit: number }): Promise<number> {
      const days = Object.fromEntries(Object.entries(FLOW_PLANS).map(([plan, p]) => [plan, p.artefactRetentionDays]));
      const rows = await expiredRunArtefacts(deps.db, input.limit, days, FLOW_PLANS.free.artefactRetentionDays);
      for (const row of rows) {
        await deps.storage.delete(row.artefact_key);
        await markArtefactExpired(deps.db, row.id);
      }
      return rows.length;
    },
  };
}
