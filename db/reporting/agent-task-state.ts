import { randomUUID } from 'node:crypto';
import { agentTaskMachine, type AgentTaskStatus } from '../../domain/reporting/agent-task-status';
import { randomBase62 } from '../../domain/signing';
import { modifyReturning, type Queryable } from '../sql';
import type { AgentTaskKind } from './agent-task.entity';

/**
 * The only writer of `reporting_agent_tasks.status` (docs/architecture.md, "State machines"): tasks
 * are inserted `queued` and moved by conditional UPDATEs from the statuses
 * domain/reporting/agent-task-status.ts allows to reach the target, so a task that ended (or was
 * leased by another session) is never moved by a late answer, heartbeat or sweep.
 */

const [QUEUED] = agentTaskMachine.initial;
const ANY_OPEN_TO_EXPIRED = agentTaskMachine.sourcesOf('expired', ['queued', 'leased', 'cancel_requested']);

/** A test, schema or preview task the API asks for (attempt 1, no workflow). Answers its id. */
export async function queueAgentTask(db: Queryable, t: { projectId: string; agentId: string; kind: Exclude<AgentTaskKind, 'query'>; datasourceId: string; payload: Record<string, unknown> }): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO reporting_agent_tasks (id, project_id, short_id, agent_id, kind, datasource_id, attempt, payload, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, now())`,
    [id, t.projectId, `atk_${randomBase62(16)}`, t.agentId, t.kind, t.datasourceId, t.payload, QUEUED],
  );
  return id;
}

/** A query task of one activity attempt (idempotent per workflow, activity and attempt: a retried insert adds nothing). */
export async function queueQueryTask(
  db: Queryable,
  t: { projectId: string; agentId: string; datasourceId: string; runId: string; workflowId: string; activityId: string; attempt: number; payload: Record<string, unknown> },
): Promise<void> {
  await db.query(
    `INSERT INTO reporting_agent_tasks (id, project_id, short_id, agent_id, kind, datasource_id, run_id, workflow_id, activity_id, attempt, payload, status, created_at)
     VALUES ($1, $2, $3, $4, 'query', $5, $6, $7, $8, $9, $10, $11, now())
     ON CONFLICT (workflow_id, activity_id, attempt) WHERE workflow_id IS NOT NULL DO NOTHING`,
    [randomUUID(), t.projectId, `atk_${randomBase62(16)}`, t.agentId, t.datasourceId, t.runId, t.workflowId, t.activityId, t.attempt, t.payload, QUEUED],
  );
}

/**
 * `queued → leased`: the oldest queued task of the agent on a datasource of a kind the session reaches (`kinds`), if the session
 * is the agent's current one, the agent is active and confirmed, and the session has room. Answers its id.
 */
export async function leaseNextTask(
  db: Queryable,
  l: { projectId: string; agentId: string; sessionId: string; kinds: string[]; maxConcurrency: number; leaseSeconds: number },
): Promise<string | null> {
  const rows = await modifyReturning<{ id: string }>(
    db,
    `WITH next AS (
       SELECT t.id FROM reporting_agent_tasks t
         JOIN reporting_datasources d ON d.id = t.datasource_id AND d.project_id = t.project_id AND d.agent_id = t.agent_id AND d.connection_mode = 'agent'
        WHERE t.project_id = $1 AND t.agent_id = $2 AND t.status = ANY($7::text[]) AND d.kind = ANY($4::text[])
          AND EXISTS (SELECT 1 FROM reporting_agents a WHERE a.id = $2 AND a.project_id = $1 AND a.is_active AND a.session->>'id' = $3::text
                        AND (a.public_key IS NULL OR a.key_confirmed_at IS NOT NULL))
          AND (SELECT count(*) FROM reporting_agent_tasks l WHERE l.agent_id = $2 AND l.session_id = $3::uuid AND l.status = 'leased') < $5
        ORDER BY t.created_at, t.id
        LIMIT 1
        FOR UPDATE OF t SKIP LOCKED)
     UPDATE reporting_agent_tasks t
        SET status = 'leased', session_id = $3::uuid, leased_at = now(), lease_expires_at = now() + make_interval(secs => $6)
       FROM next WHERE t.id = next.id
     RETURNING t.id`,
    [l.projectId, l.agentId, l.sessionId, l.kinds, l.maxConcurrency, l.leaseSeconds, agentTaskMachine.sourcesOf('leased')],
  );
  return rows[0]?.id ?? null;
}

/**
 * The agent's answer to a task its session holds: `completed` or `failed` from `leased` or
 * `cancel_requested`, `cancelled` only from `cancel_requested`. Answers whether it moved (a lease
 * lost meanwhile, expired, cancelled or another session's, moves nothing).
 */
export async function answerTask(
  db: Queryable,
  a: { taskId: string; sessionId: string; status: Extract<AgentTaskStatus, 'completed' | 'failed' | 'cancelled'>; result?: unknown; resultKey?: string | null; error?: unknown },
): Promise<boolean> {
  const from = agentTaskMachine.sourcesOf(a.status, a.status === 'cancelled' ? ['cancel_requested'] : ['leased', 'cancel_requested']);
  const updated = await modifyReturning<{ id: string }>(
    db,
    `UPDATE reporting_agent_tasks SET status = $3, result = $4, result_key = $5, error = $6, completed_at = now()
      WHERE id = $1 AND session_id = $2 AND status = ANY($7::text[]) RETURNING id`,
    [a.taskId, a.sessionId, a.status, a.result ?? null, a.resultKey ?? null, a.error ?? null, from],
  );
  return updated.length > 0;
}

/**
 * Cancels tasks (one, or a run's): a queued one ends `cancelled` at once, a leased one becomes
 * `cancel_requested` (the agent is told at its next heartbeat).
 */
export async function cancelTasks(db: Queryable, which: { taskId: string } | { runId: string }): Promise<void> {
  await db.query(
    `UPDATE reporting_agent_tasks SET status = CASE WHEN status = ANY($2::text[]) THEN 'cancelled' ELSE 'cancel_requested' END,
            completed_at = CASE WHEN status = ANY($2::text[]) THEN now() ELSE completed_at END
      WHERE ${'taskId' in which ? 'id' : 'run_id'} = $1 AND status = ANY($2::text[] || $3::text[])`,
    ['taskId' in which ? which.taskId : which.runId, agentTaskMachine.sourcesOf('cancelled', ['queued']), agentTaskMachine.sourcesOf('cancel_requested', ['leased'])],
  );
}

/** A task whose activity is gone: `expired` unless it ended. */
export async function expireTask(db: Queryable, taskId: string): Promise<void> {
  await db.query(`UPDATE reporting_agent_tasks SET status = 'expired', completed_at = now() WHERE id = $1 AND status = ANY($2::text[])`, [taskId, ANY_OPEN_TO_EXPIRED]);
}

/** An answer recorded after its run stopped waiting: `completed`/`failed` → `expired` (its completion time stays). */
export async function expireUnawaitedAnswer(db: Queryable, taskId: string): Promise<void> {
  await db.query(`UPDATE reporting_agent_tasks SET status = 'expired' WHERE id = $1 AND status = ANY($2::text[])`, [taskId, agentTaskMachine.sourcesOf('expired', ['completed', 'failed'])]);
}

/** The open tasks of an activity's earlier attempts: `expired` (heartbeats and answers now belong to `attempt`). */
export async function expireEarlierAttempts(db: Queryable, a: { workflowId: string; activityId: string; attempt: number }): Promise<void> {
  await db.query(
    `UPDATE reporting_agent_tasks SET status = 'expired', completed_at = now()
      WHERE workflow_id = $1 AND activity_id = $2 AND attempt < $3 AND status = ANY($4::text[])`,
    [a.workflowId, a.activityId, a.attempt, ANY_OPEN_TO_EXPIRED],
  );
}

/**
 * The sweep's moves (docs/reporting.md "Agents"), up to `limit` each: queued API tasks nobody leased
 * within `queueTimeoutSeconds` fail ERR_AGENT_012; leases that ran out expire. Answers the raw
 * results (the driver's `[rows, count]`) for the caller's count.
 */
export async function sweepAgentTasks(db: Queryable, s: { queueTimeoutSeconds: number; limit: number }): Promise<{ failed: unknown; expired: unknown }> {
  const failed: unknown = await db.query(
    `UPDATE reporting_agent_tasks SET status = 'failed', completed_at = now(),
            error = jsonb_build_object('code', 'ERR_AGENT_012', 'message', 'No agent picked up the task in time', 'retryable', false)
      WHERE id IN (SELECT id FROM reporting_agent_tasks WHERE status = ANY($3::text[]) AND workflow_id IS NULL
                    AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2)`,
    [s.queueTimeoutSeconds, s.limit, agentTaskMachine.sourcesOf('failed', ['queued'])],
  );
  const expired: unknown = await db.query(
    `UPDATE reporting_agent_tasks SET status = 'expired', completed_at = now()
      WHERE id IN (SELECT id FROM reporting_agent_tasks WHERE status = ANY($2::text[])
                    AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT $1)`,
    [s.limit, agentTaskMachine.sourcesOf('expired', ['leased', 'cancel_requested'])],
  );
  return { failed, expired };
}
