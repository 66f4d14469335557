import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AgentEntity } from '../../db/reporting/agent.entity';
import { AgentTaskEntity } from '../../db/reporting/agent-task.entity';
import { isUniqueViolation } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { isUuid } from '../../domain/flow/flow-ids';
import { randomBase62 } from '../../domain/signing';
import { newAgentToken } from './agent-token';
import type { AgentStatus, CreateAgentInput, ListAgentsQuery, ListTasksQuery, UpdateAgentInput } from './agents.schema';

/**
 * Reporting agents, managed by admins (docs/reporting.md "Agents"; design B5.5). The token is
 * answered once (create, rotate) and only its SHA-256 is kept; status is computed when read.
 */

const SHORT_ID_PREFIX = 'agt_';
/** Seen within this long: online (design B5.10: offline after 60 s without a poll or heartbeat). */
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
  const qb = db.getRepository(AgentEntity).createQueryBuilder('a').where('a.projectId = :projectId', { projectId });
  let found: AgentEntity | null = null;
  if (isUuid(ref)) found = await qb.andWhere('a.id = :ref', { ref }).getOne();
  else if (ref.startsWith(SHORT_ID_PREFIX) && ref.length <= 40) found = await qb.andWhere('a.shortId = :ref', { ref }).getOne();
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
