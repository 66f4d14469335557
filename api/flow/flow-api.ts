import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { createOutboundGuard, type OutboundGuard } from '../../adapters/http/outbound';
import type { Services } from '../../platform/services';
import { requireProject, type ProjectRequirement } from '../middleware/guards';
import { createLimiterFactory } from '../rate-limits';
import { analyticsRoutes } from './analytics.routes';
import { deliveryRoutes } from './deliveries.routes';
import { gateRoutes } from './gates.routes';
import { runRoutes } from './runs.routes';
import { submissionRoutes } from './submissions.routes';
import type { SubmissionDeps } from './submissions.service';

/**
 * The Flow API's shared parts, built once per app: the compiled-gate cache, per-gate rate
 * limiters, and the access rule of every Flow route.
 *
 * Access: any active API key of the workspace reads gates and run lists and submits (spec: Flow
 * takes API keys, scoped to the key's project); a run's payload (GET /api/flow/runs/:id, the bodies
 * of its deliveries, the MCP get_run tool) needs the key's `read_runs` flag; changing a gate's
 * configuration (create, update, delete, schema, import-schema: delivery channels and render
 * configuration live there) needs its `manage_gates` flag (docs/security.md, "Permissions"). The
 * dashboard's JWT acts on its active project (contract §2: viewers read, members "run gates" and
 * edit them). Review tokens are refused.
 */
/** Who may read, submit and configure: the REST routes' guards and the MCP tools use these same rules. */
export const FLOW_ACCESS = {
  read: { role: 'viewer', permission: true },
  readRuns: { role: 'viewer', permission: 'read_runs' },
  write: { role: 'member', permission: true },
  manage: { role: 'member', permission: 'manage_gates' },
} as const satisfies Record<string, ProjectRequirement>;

export interface FlowApiDeps {
  db: DataSource;
  /** Base of the absolute URLs answers carry (`Location` of a created run). */
  publicUrl: string;
  storage: ArtefactStorage;
  /** Checks gates' delivery channels and render API URLs when they are saved (docs/flow.md). */
  guard: OutboundGuard;
  downloadUrlTtlSeconds: number;
  submissions: SubmissionDeps;
  read: Middleware;
  /** A run's payload: a viewer's JWT, or an API key with `read_runs`. */
  readRuns: Middleware;
  write: Middleware;
  /** Gate configuration: a member's JWT, or an API key with `manage_gates`. */
  manage: Middleware;
}

export interface FlowApi {
  routers: Router[];
  /** What the Flow routes are built from; the MCP tools (api/mcp/) call the same services with it. */
  deps: FlowApiDeps;
}

export function createFlowApi(services: Services): FlowApi {
  const { db, config } = services;
  const makeLimiter = createLimiterFactory(services.redis, config.temporal.taskQueuePrefix);
  const limiters = new Map<number, RateLimiterAbstract>();
  const gateLimiter = (points: number) => {
    let limiter = limiters.get(points);
    if (!limiter) limiters.set(points, (limiter = makeLimiter(`flow-gate-${points}`, points, 60)));
    return limiter;
  };
  const deps: FlowApiDeps = {
    db,
    publicUrl: config.publicUrl,
    storage: services.storage,
    guard: createOutboundGuard(config.outbound.allowlist),
    downloadUrlTtlSeconds: config.storage.downloadUrlTtlSeconds,
    submissions: { db, evaluator: services.evaluator, gateLimiter, outbox: services.outbox, freeDocumentsPerMonth: config.documents.freeDocumentsPerMonth },
    read: requireProject(db, FLOW_ACCESS.read) as Middleware,
    readRuns: requireProject(db, FLOW_ACCESS.readRuns) as Middleware,
    write: requireProject(db, FLOW_ACCESS.write) as Middleware,
    manage: requireProject(db, FLOW_ACCESS.manage) as Middleware,
  };
  return {
    routers: [
      gateRoutes(deps),
      submissionRoutes(deps),
      runRoutes(deps),
      analyticsRoutes(deps),
      deliveryRoutes(deps, { db, temporal: services.temporal, taskQueues: services.taskQueues, retryDelaysMs: config.webhooks.retryDelaysMs }),
    ],
    deps,
  };
}
