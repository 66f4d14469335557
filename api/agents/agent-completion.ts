import { ActivityCancelledError, ActivityNotFoundError, type Client, type FullActivityId } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { DataSource } from 'typeorm';
import type { AgentTaskEntity } from '../../db/reporting/agent-task.entity';
import { agentQueryResult } from '../../db/reporting/agent-task-result';
import { AppError } from '../../domain/errors';
import type { Logger } from '../../domain/logger';
import { schemaOutcome, testOutcome } from '../reporting/agent-tasks.service';
import type { AgentHooks } from './agent-protocol.service';
import { cancelTasks, expireTask, expireUnawaitedAnswer } from '../../db/reporting/agent-task-state';

/**
 * How agents' work reaches Temporal (docs/reporting.md "Agents", "Why agents speak HTTPS, not Temporal",
 * "Temporal workflows"). A `query` task belongs to one attempt of a `runAgentQuery` activity that completed
 * asynchronously: the API, never the agent, heartbeats, completes and fails it by `{workflowId, activityId}`. Every
 * poll and heartbeat of the agent heartbeats the activities of its queued and leased tasks, so an agent that
 * goes silent lets the activity's heartbeat timeout fire and the retry policy decide. Test, schema and
 * preview tasks have no activity: their answers are recorded by agent-tasks.service.ts.
 */
export interface AgentCompletionDeps {
  db: DataSource;
  temporal: Client;
  logger: Logger;
}

const activityOf = (t: AgentTaskEntity): FullActivityId | null => (t.workflowId && t.activityId ? { workflowId: t.workflowId, activityId: t.activityId } : null);

/** The failure runAgentQuery ends with: the agent's code as the failure type, retried only when the agent said it may help. */
function queryFailure(t: AgentTaskEntity): ApplicationFailure {
  const e = (t.error ?? {}) as { code?: string; message?: string; retryable?: boolean; dbCode?: string };
  const code = e.code && /^ERR_[A-Z]+_\d{3}$/.test(e.code) ? e.code : 'ERR_QRY_006';
  const message = e.message || 'The agent could not run the query';
  return ApplicationFailure.create({ type: code, message, nonRetryable: !e.retryable, details: [{ agentCode: e.code ?? null, ...(e.dbCode ? { dbCode: e.dbCode } : {}) }] });
}

/**
 * A test's or schema discovery's answer lands on its datasource when it comes, whether or not the
 * request that asked is still waiting (a 202 caller reads it later from the datasource or the task).
 */
async function recordAnswer(db: DataSource, task: AgentTaskEntity): Promise<void> {
  if (task.kind === 'test') {
    await db.query(`UPDATE reporting_datasources SET last_test = $3 WHERE id = $1 AND project_id = $2`, [task.datasourceId, task.projectId, testOutcome(task)]);
  } else if (task.kind === 'schema' && task.status === 'completed') {
    const schema = schemaOutcome(task);
    await db.query(`UPDATE reporting_datasources SET schema = $3, schema_refreshed_at = $4 WHERE id = $1 AND project_id = $2`, [task.datasourceId, task.projectId, schema, schema.refreshedAt]);
  }
}

export function createAgentHooks(deps: AgentCompletionDeps): AgentHooks {
  const { db, temporal, logger } = deps;

  /** A task whose activity is cancelled or gone: a queued one ends here, a leased one is told to stop (the heartbeat answer's `cancel`). */
  async function stop(task: AgentTaskEntity, why: 'cancelled' | 'expired'): Promise<void> {
    if (why === 'cancelled') await cancelTasks(db, { taskId: task.id });
    else await expireTask(db, task.id);
  }

  return {
    async onAgentHeartbeat(tasks) {
      await Promise.all(
        tasks.map(async (task) => {
          const id = activityOf(task);
          if (!id) return;
          try {
            await temporal.activity.heartbeat(id, { taskId: task.shortId, status: task.status });
          } catch (err) {
            if (err instanceof ActivityCancelledError) await stop(task, 'cancelled');
            else if (err instanceof ActivityNotFoundError) await stop(task, 'expired');
            else logger.warn('agent task heartbeat not delivered', { taskId: task.shortId, error: err instanceof Error ? err.message : String(err) });
          }
        }),
      );
    },

    async onAgentTaskDone(task) {
      const id = activityOf(task);
      if (!id) {
        await recordAnswer(db, task);
        return;
      }
      try {
        if (task.status === 'completed') await temporal.activity.complete(id, agentQueryResult(task.resultKey, task.result));
        else if (task.status === 'failed') await temporal.activity.fail(id, queryFailure(task));
        else if (task.status === 'cancelled') await temporal.activity.reportCancellation(id, { taskId: task.shortId });
      } catch (err) {
        // The run ended or the attempt timed out meanwhile: nothing waits for this answer any more (410 to the agent).
        if (err instanceof ActivityNotFoundError) {
          // A cancelled run ends without waiting for its agent: the cancellation is the answer it expected.
          if (task.status === 'cancelled') return;
          await expireUnawaitedAnswer(db, task.id);
          throw new AppError('ERR_AGENT_006', 'The run no longer waits for this task');
        }
        throw err;
      }
    },
  };
}
