import type { AgentEntity } from '../../db/reporting/agent.entity';
import type { AgentTaskEntity } from '../../db/reporting/agent-task.entity';
import { keyFingerprint } from '../../domain/reporting/key-fingerprint';
import { agentKeyStatus, agentStatus } from './agents.service';

/** An agent as every answer shows it (docs/reporting.md "Agents"): never the token or its hash. */
export function presentAgent(a: AgentEntity, datasourceCount: number) {
  return {
    id: a.id,
    shortId: a.shortId,
    name: a.name,
    description: a.description,
    isActive: a.isActive,
    tokenPrefix: a.tokenPrefix,
    publicKey: a.publicKey,
    // An admin compares this with what the agent printed at its start, then confirms (docs/agent.md).
    keyFingerprint: a.publicKey ? keyFingerprint(a.publicKey) : null,
    keyStatus: agentKeyStatus(a),
    keyConfirmedAt: a.keyConfirmedAt?.toISOString() ?? null,
    status: agentStatus(a),
    lastSeenAt: a.lastSeenAt?.toISOString() ?? null,
    session: a.session,
    load: a.load ? { running: a.load.running, capacity: a.load.capacity, queued: a.load.queued } : null,
    pools: a.pools,
    datasourceCount,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

export function presentHealth(a: AgentEntity) {
  const { status, lastSeenAt, session, load, pools } = presentAgent(a, 0);
  return { status, lastSeenAt, session, load, pools, recentErrors: a.recentErrors.slice(-20) };
}

/** An agent task for the management API (docs/reporting.md "Agents"): never the statement's values or secrets. */
export function presentTask(t: AgentTaskEntity, agentShortId: string) {
  return {
    id: t.shortId,
    // The agent's UUID, as its own routes (/api/agents/:id) and datasources name it; its short id beside.
    agentId: t.agentId,
    agentShortId,
    kind: t.kind,
    datasourceId: t.datasourceId,
    runId: t.runId,
    status: t.status,
    attempt: t.attempt,
    leasedAt: t.leasedAt?.toISOString() ?? null,
    leaseExpiresAt: t.leaseExpiresAt?.toISOString() ?? null,
    completedAt: t.completedAt?.toISOString() ?? null,
    error: t.error,
    createdAt: t.createdAt.toISOString(),
  };
}
