import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AgentEntity } from '../../db/reporting/agent.entity';
import { AgentTaskEntity } from '../../db/reporting/agent-task.entity';
import { isUniqueViolation } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { keyFingerprint } from '../../domain/reporting/key-fingerprint';
import { randomBase62 } from '../../domain/signing';
import { newAgentToken } from './agent-token';
import type { AgentStatus, CreateAgentInput, ListAgentsQuery, ListTasksQuery, UpdateAgentInput } from './agents.schema';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Reporting agents, managed by admins (docs/reporting.md "Agents", "The agent protocol"). The token is
 * answered once (create, rotate) and only its SHA-256 is kept; status is computed when read.
 */

const SHORT_ID_PREFIX = 'agt_';
/** Seen within this long: online (docs/reporting.md "Limits": offline after 60 s without a poll or heartbeat). */
const ONLINE_WINDOW_MS = 60_000;
/** Heartbeats in a row with a pool in trouble before the agent counts as degraded. */
const DEGRADED_AFTER_BEATS = 3;

export function agentStatus(agent: AgentEntity, now = Date.now()): AgentStatus {
  if (!agent.lastSeenAt) return 'never_connected';
  if (now - agent.lastSeenAt.getTime() > ONLINE_WINDOW_MS) return 'offline';
  return (agent.load?.unhealthyBeats ?? 0) >= DEGRADED_AFTER_BEATS ? 'degraded' : 'online';
}

const nameTaken = (name: string) => new AppError('ERR_VALID_001', 'An agent with the same name exists in this project', { field: 'name', name });

export async function createAgent(db: DataSource, projectId: string, userId: string | undefined, input: CreateAgentInput): Promise<{ agent: AgentEntity; token: string }> {
  const now = new Date();
  const { token, hash, prefix } = newAgentToken();
  const agent = Object.assign(new AgentEntity(), {
    id: randomUUID(),
    projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    name: input.name,
    description: input.description || null,
    isActive: true,
    tokenHash: hash,
    tokenPrefix: prefix,
    publicKey: null,
    keyConfirmedAt: null,
    keyConfirmedBy: null,
    lastSeenAt: null,
    session: null,
    load: null,
    pools: [],
    recentErrors: [],
    createdBy: userId ?? null,
    createdAt: now,
    updatedAt: now,
  });
  try {
    await db.getRepository(AgentEntity).insert(agent);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return { agent, token };
}

/** How many datasources are bound to each of `ids`. */
export async function datasourceCounts(db: DataSource, projectId: string, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows: Array<{ agent_id: string; n: number }> = await db.query(
    `SELECT agent_id, count(*)::int AS n FROM reporting_datasources WHERE project_id = $1 AND agent_id = ANY($2::uuid[]) GROUP BY agent_id`,
    [projectId, ids],
  );
  return new Map(rows.map((r) => [r.agent_id, r.n]));
}

/** Status filters are computed from `last_seen_at` and the unhealthy-beat count, in SQL so pages stay right. */
const STATUS_SQL: Record<AgentStatus, string> = {
  never_connected: 'a.last_seen_at IS NULL',
  offline: `a.last_seen_at < now() - interval '${ONLINE_WINDOW_MS / 1000} seconds'`,
  degraded: `a.last_seen_at >= now() - interval '${ONLINE_WINDOW_MS / 1000} seconds' AND COALESCE((a.load->>'unhealthyBeats')::int, 0) >= ${DEGRADED_AFTER_BEATS}`,
  online: `a.last_seen_at >= now() - interval '${ONLINE_WINDOW_MS / 1000} seconds' AND COALESCE((a.load->>'unhealthyBeats')::int, 0) < ${DEGRADED_AFTER_BEATS}`,
};

export async function listAgents(db: DataSource, projectId: string, query: ListAgentsQuery): Promise<{ agents: AgentEntity[]; total: number }> {
  const qb = db.getRepository(AgentEntity).createQueryBuilder('a').where('a.projectId = :projectId', { projectId });
  if (query.status) qb.andWhere(STATUS_SQL[query.status]);
  const [agents, total] = await qb
    .orderBy('a.createdAt', 'DESC')
    .addOrderBy('a.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { agents, total };
}

/** An agent of the project by UUID or short id (`agt_…`); another project's answers 404 ERR_AGENT_001. */
export async function getAgent(db: DataSource, projectId: string, ref: string): Promise<AgentEntity> {
  const found = await findByIdOrShortId(db, AgentEntity, projectId, ref, SHORT_ID_PREFIX, 40);
  if (!found) throw new AppError('ERR_AGENT_001');
  return found;
}

export async function updateAgent(db: DataSource, projectId: string, ref: string, patch: UpdateAgentInput): Promise<AgentEntity> {
  const agent = await getAgent(db, projectId, ref);
  const set: Partial<AgentEntity> = { updatedAt: new Date() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description || null;
  if (patch.isActive !== undefined) set.isActive = patch.isActive;
  try {
    await db.getRepository(AgentEntity).update({ id: agent.id, projectId }, set);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(patch.name ?? agent.name);
    throw err;
  }
  return Object.assign(agent, set);
}

/** A new token; the old one's hash is overwritten, so it stops on its next request. The key pair stays. */
export async function rotateToken(db: DataSource, projectId: string, ref: string): Promise<{ token: string; tokenPrefix: string }> {
  const agent = await getAgent(db, projectId, ref);
  const { token, hash, prefix } = newAgentToken();
  await db.getRepository(AgentEntity).update({ id: agent.id, projectId }, { tokenHash: hash, tokenPrefix: prefix, updatedAt: new Date() });
  return { token, tokenPrefix: prefix };
}

export type AgentKeyStatus = 'none' | 'pending' | 'confirmed';

export const agentKeyStatus = (agent: Pick<AgentEntity, 'publicKey' | 'keyConfirmedAt'>): AgentKeyStatus => (!agent.publicKey ? 'none' : agent.keyConfirmedAt ? 'confirmed' : 'pending');

/**
 * The public key secrets may be sealed to: the agent's key once an admin confirmed it, else none
 * (docs/agent.md "Confirming the key"). A key the first session sent is only a claim: whoever holds
 * the token can send one.
 */
export const confirmedKey = (agent: AgentEntity): string | null => (agent.keyConfirmedAt ? agent.publicKey : null);

/**
 * Confirms the agent's pending public key (docs/agent.md "Confirming the key"). The admin names the
 * fingerprint they compared with the one the agent printed; a key that changed meanwhile (cleared,
 * and another sent) does not match (409 ERR_AGENT_014). No pending key: 409 ERR_AGENT_013.
 */
export async function confirmKey(db: DataSource, projectId: string, ref: string, userId: string | undefined, fingerprint: string): Promise<AgentEntity> {
  const agent = await getAgent(db, projectId, ref);
  if (agentKeyStatus(agent) !== 'pending') throw new AppError('ERR_AGENT_013', undefined, { keyStatus: agentKeyStatus(agent) });
  if (keyFingerprint(agent.publicKey!) !== fingerprint) throw new AppError('ERR_AGENT_014', undefined, { field: 'fingerprint' });
  const now = new Date();
  // Only the key that was compared: a key cleared and replaced since the read stays pending.
  const [, affected] = await db.query(
    `UPDATE reporting_agents SET key_confirmed_at = $4, key_confirmed_by = $5, updated_at = $4 WHERE id = $1 AND project_id = $2 AND public_key = $3 AND key_confirmed_at IS NULL`,
    [agent.id, projectId, agent.publicKey, now, userId ?? null],
  );
  if (affected !== 1) throw new AppError('ERR_AGENT_014', undefined, { field: 'fingerprint' });
  return Object.assign(agent, { keyConfirmedAt: now, keyConfirmedBy: userId ?? null, updatedAt: now });
}

/**
 * Forgets the agent's public key, pending or confirmed (docs/agent.md "Confirming the key"): the next
 * session's key is pinned and waits for confirmation again. Secrets sealed to the old key no longer
 * open; their datasources need their passwords again.
 */
export async function clearKey(db: DataSource, projectId: string, ref: string): Promise<AgentEntity> {
  const agent = await getAgent(db, projectId, ref);
  const now = new Date();
  await db.query(`UPDATE reporting_agents SET public_key = NULL, key_confirmed_at = NULL, key_confirmed_by = NULL, updated_at = $3 WHERE id = $1 AND project_id = $2`, [agent.id, projectId, now]);
  return Object.assign(agent, { publicKey: null, keyConfirmedAt: null, keyConfirmedBy: null, updatedAt: now });
}

/** Refused while datasources are bound (409 ERR_AGENT_009); the agent's tasks go with it. */
export async function deleteAgent(db: DataSource, projectId: string, ref: string): Promise<void> {
  const agent = await getAgent(db, projectId, ref);
  await db.transaction(async (tx) => {
    // Serialises with a datasource being bound to this agent at the same moment.
    await tx.query(`SELECT 1 FROM reporting_agents WHERE id = $1 FOR UPDATE`, [agent.id]);
    const [{ n }] = await tx.query(`SELECT count(*)::int AS n FROM reporting_datasources WHERE project_id = $1 AND agent_id = $2`, [projectId, agent.id]);
    if (n > 0) throw new AppError('ERR_AGENT_009', undefined, { datasources: n });
    await tx.query(`DELETE FROM reporting_agents WHERE id = $1 AND project_id = $2`, [agent.id, projectId]);
  });
}

export async function listTasks(db: DataSource, projectId: string, ref: string, query: ListTasksQuery): Promise<{ tasks: AgentTaskEntity[]; total: number }> {
  const agent = await getAgent(db, projectId, ref);
  const qb = db.getRepository(AgentTaskEntity).createQueryBuilder('t').where('t.projectId = :projectId AND t.agentId = :agentId', { projectId, agentId: agent.id });
  if (query.status) qb.andWhere('t.status = :status', { status: query.status });
  if (query.kind) qb.andWhere('t.kind = :kind', { kind: query.kind });
  const [tasks, total] = await qb
    .orderBy('t.createdAt', 'DESC')
    .addOrderBy('t.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { tasks, total };
}
