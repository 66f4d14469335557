import { CompleteAsyncError, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { DataSource } from 'typeorm';
import { AgentEntity } from '../../db/reporting/agent.entity';
import { agentQueryResult } from '../../db/reporting/agent-task-result';
import { DatasourceEntity } from '../../db/reporting/datasource.entity';
import { AppError } from '../../domain/errors';
import type { RunDirectQueryInput, RunDirectQueryResult } from './run-direct-query.activity';
import { expireEarlierAttempts, queueQueryTask } from '../../db/reporting/agent-task-state';
import { isUuid } from '../../domain/ids';

/**
 * The `runAgentQuery` activity of the main task queue (docs/reporting.md "Agents",
 * "Why agents speak HTTPS, not Temporal", "Temporal workflows"): each attempt records one agent task, unique on
 * `(workflowId, activityId, attempt)` so a re-executed attempt finds its own row, and then completes asynchronously.
 * The API completes, fails or heartbeats it by `{workflowId, activityId}` when the agent reports
 * (api/agents/agent-completion.ts); the agent never holds a Temporal credential. Its statement and limits are data; the
 * datasource's secrets are added when the agent leases the task, never put in Temporal.
 */
export interface RunAgentQueryInput extends RunDirectQueryInput {
  /** The agent the datasource was bound to when the run was planned. */
  agentId: string;
}

export interface AgentQueryActivityDeps {
  db: DataSource;
  /** config.reporting: the system maximums the task's limits are capped by. */
  limits: { queryTimeoutSeconds: number; maxRows: number; resultMaxBytes: number };
}

const DATASET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,99}$/;

export function createAgentQueryActivities(deps: AgentQueryActivityDeps) {
  const { db } = deps;
  return {
    async runAgentQuery(input: RunAgentQueryInput): Promise<RunDirectQueryResult> {
      if (!DATASET_NAME.test(input.datasetName)) throw new AppError('ERR_VALID_001', 'datasetName must be 1-100 letters, digits, _ or -', { field: 'datasetName' });
      const { workflowExecution, activityId, attempt } = Context.current().info;
      const workflowId = workflowExecution?.workflowId;
      if (!workflowId) throw new AppError('ERR_INTERNAL_001', 'runAgentQuery runs only inside a workflow');

      const [done]: Array<{ result_key: string; result: Record<string, unknown> }> = await db.query(
        `SELECT result_key, result FROM reporting_agent_tasks
          WHERE workflow_id = $1 AND activity_id = $2 AND status = 'completed' AND result_key IS NOT NULL
          ORDER BY attempt DESC LIMIT 1`,
        [workflowId, activityId],
      );
      // An earlier attempt's task the agent completed after that attempt had timed out: its result stands.
      if (done) return agentQueryResult(done.result_key, done.result);
      // Earlier attempts end here: heartbeats and answers by activity id now belong to this attempt.
      await expireEarlierAttempts(db, { workflowId, activityId, attempt });

      const ds = isUuid(input.projectId) && isUuid(input.datasourceId) ? await db.getRepository(DatasourceEntity).findOneBy({ projectId: input.projectId, id: input.datasourceId }) : null;
      if (!ds) throw new AppError('ERR_DS_001');
      if (ds.connectionMode !== 'agent' || ds.agentId !== input.agentId) {
        throw new AppError('ERR_DS_005', 'The datasource was moved off its agent since the run was planned', { field: 'connectionMode' });
      }
      const agent = await db.getRepository(AgentEntity).findOneBy({ id: input.agentId, projectId: input.projectId });
      if (!agent) throw new AppError('ERR_DS_006', undefined, { field: 'agentId' });
      if (!agent.isActive) throw ApplicationFailure.create({ type: 'ERR_AGENT_003', message: 'The datasource\'s agent is deactivated (AGENT_DISABLED)', nonRetryable: true });

      const limits = {
        maxRows: Math.min(input.limits.maxRows, deps.limits.maxRows),
        timeoutSeconds: Math.ceil(Math.min(input.limits.timeoutMs, deps.limits.queryTimeoutSeconds * 1000) / 1000),
        maxBytes: Math.min(input.limits.maxBytes, deps.limits.resultMaxBytes),
        onRowLimit: input.limits.onRowLimit,
      };
      await queueQueryTask(db, {
        projectId: input.projectId,
        agentId: agent.id,
        datasourceId: ds.id,
        runId: input.runId,
        workflowId,
        activityId,
        attempt,
        payload: { statement: { dialect: ds.kind, sql: input.compiled.text, values: input.compiled.values }, limits, datasetName: input.datasetName },
      });
      throw new CompleteAsyncError();
    },
  };
}
