import type { DataSource } from 'typeorm';
import { QueryVersionEntity } from '../../db/reporting/query-version.entity';
import { ReportRunEntity } from '../../db/reporting/report-run.entity';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { completeWithOutputs, moveReportRun, recordRunDataset, startRendering } from '../../db/reporting/run-state';
import { reportRunMachine, type FailedStage, type RunDataset } from '../../domain/reporting/run-status';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import { compileQuery } from '../../domain/reporting/compile-query';
import { coerceParameters, datasetQueryInput, type ParameterValue } from '../../domain/reporting/parameters';
import type { CompiledQuery, DatasourceKind, QueryLimits } from '../../domain/reporting/query-runner';
import type { RenderedReportOutput } from './render-report.activity';
import { cancelTasks } from '../../db/reporting/agent-task-state';

/**
 * The bookkeeping activities of `reportRunWorkflow` (main task queue; docs/reporting.md "Runs", "Temporal workflows"):
 * every status move goes through db/reporting/run-state.ts, so a retried activity or a late step of a cancelled run
 * changes nothing. Query text is compiled in the evaluation workers (domain/checks.ts `compiledQuery`), never on the
 * thread that polls Temporal.
 */

export interface ReportRunActivityDeps {
  db: DataSource;
  evaluator: Evaluator;
  /** FREE_DOCUMENTS_PER_MONTH: PDF and Excel outputs count against it like generated documents. */
  freeDocumentsPerMonth: number;
  /** REPORTING_ARTEFACT_RETENTION_DAYS. */
  artefactRetentionDays: number;
  /** REPORTING_AGENT_*: the timeouts and first retry wait of a dataset an agent runs. */
  agents: { queueTimeoutSeconds: number; heartbeatTimeoutSeconds: number; retryDelaySeconds: number };
}

/**
 * How the workflow waits for an agent's query (docs/reporting.md "Report runs through an agent"), fixed when the run is
 * planned.
 */
export interface PlannedAgentQuery {
  agentId: string;
  heartbeatTimeoutMs: number;
  /** The queue timeout + the query's timeout + 60 s. */
  startToCloseTimeoutMs: number;
  retryDelayMs: number;
}

/**
 * One dataset's query, ready for runDirectQuery, or for runAgentQuery when `agent` is set (no secret:
 * the activity, or the agent's lease, loads the datasource).
 */
export interface PlannedDataset {
  name: string;
  datasourceId: string;
  compiled: CompiledQuery;
  limits: QueryLimits;
  /** The datasource is reached through this agent (absent in plans from before agents: direct). */
  agent?: PlannedAgentQuery;
}

export interface ReportRunPlan {
  projectId: string;
  runShortId: string;
  reportId: string;
  reportVersion: number;
  trigger: ReportRunEntity['trigger'];
  skipIfEmpty: boolean;
  parameters: Record<string, unknown>;
  scheduledFor: string;
  timezone: string;
  formats: ReportRunEntity['formats'];
  datasets: PlannedDataset[];
}

/** A run's stored parameter values with the built-ins of its clock (`now` = when it was requested). */
function runValues(run: ReportRunEntity, version: ReportVersionEntity): Record<string, ParameterValue> {
  return coerceParameters(version.definition.parameters, run.parameters, { now: run.createdAt, timezone: run.timezone, scheduledFor: run.scheduledFor });
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function createReportRunActivities(deps: ReportRunActivityDeps) {
  const { db } = deps;

  async function loadRun(runId: string): Promise<ReportRunEntity> {
    const run = await db.getRepository(ReportRunEntity).findOneBy({ id: runId });
    if (!run) throw new AppError('ERR_RPT_009', `report run ${runId} no longer exists`);
    return run;
  }

  return {
    /**
     * `queued → running` and the plan of the run: each dataset's query version compiled with the
     * run's values. Null when the run already ended (cancelled before its workflow started). A
     * report version, query version or datasource that can no longer be read, or values the query
     * refuses, throw their catalogued error (the workflow fails the run at the query stage).
     */
    async prepareReportRun(input: { runId: string }): Promise<ReportRunPlan | null> {
      const run = await loadRun(input.runId);
      if (reportRunMachine.isEnded(run.status)) return null;
      const version = await db.getRepository(ReportVersionEntity).findOneBy({ reportId: run.reportId, version: run.reportVersion });
      if (!version) throw new AppError('ERR_RPT_002', `Report version ${run.reportVersion} no longer exists`);
      const values = runValues(run, version);
      const datasets: PlannedDataset[] = [];
      const records: RunDataset[] = [];
      for (const d of version.definition.datasets) {
        const qv = await db.getRepository(QueryVersionEntity).findOneBy({ queryId: d.queryId, version: d.queryVersion });
        if (!qv) throw new AppError('ERR_QRY_004', `Version ${d.queryVersion} of the query of dataset '${d.name}' no longer exists`);
        const [ds]: Array<{ kind: DatasourceKind; connection_mode: string; agent_id: string | null }> = await db.query(
          `SELECT kind, connection_mode, agent_id FROM reporting_datasources WHERE id = $1 AND project_id = $2`,
          [qv.datasourceId, run.projectId],
        );
        if (!ds) throw new AppError('ERR_DS_001', `The datasource of dataset '${d.name}' no longer exists`);
        const def = qv.definition;
        const queryValues = coerceParameters(def.parameters, datasetQueryInput(d.parameters, values), { now: run.createdAt, timezone: run.timezone, scheduledFor: run.scheduledFor });
        // The activity adds the datasource's auth (http) or reads its file (csv) itself.
        const compiled = await compileQuery(deps.evaluator, run.projectId, ds.kind, def, queryValues, `The query of dataset '${d.name}'`);
        const agentId = ds.connection_mode === 'agent' ? ds.agent_id : null;
        const a = deps.agents;
        datasets.push({
          name: d.name,
          datasourceId: qv.datasourceId,
          compiled,
          limits: { timeoutMs: def.timeoutSeconds * 1000, maxRows: def.maxRows, maxBytes: Number.MAX_SAFE_INTEGER, onRowLimit: def.onRowLimit },
          ...(agentId
            ? { agent: { agentId, heartbeatTimeoutMs: a.heartbeatTimeoutSeconds * 1000, startToCloseTimeoutMs: (a.queueTimeoutSeconds + def.timeoutSeconds + 60) * 1000, retryDelayMs: a.retryDelaySeconds * 1000 } }
            : {}),
        });
        records.push({ name: d.name, queryId: d.queryId, queryVersion: d.queryVersion, executedBy: agentId ? 'agent' : 'server', ...(agentId ? { agentId } : {}), status: 'pending' });
      }
      // The datasets as the run record shows them, before the first query starts.
      await db.query(`UPDATE reporting_runs SET datasets = $2, updated_at = now() WHERE id = $1 AND status = 'queued'`, [run.id, JSON.stringify(records)]);
      if (run.status === 'queued' && !(await moveReportRun(db, { runId: run.id, status: 'running' }))) return null;
      return {
        projectId: run.projectId,
        runShortId: run.shortId,
        reportId: run.reportId,
        reportVersion: run.reportVersion,
        trigger: run.trigger,
        skipIfEmpty: run.skipIfEmpty ?? version.definition.skipIfEmpty,
        parameters: run.parameters,
        scheduledFor: run.scheduledFor.toISOString(),
        timezone: run.timezone,
        formats: run.formats,
        datasets,
      };
    },

    /** One dataset's progress on the run record. */
    async recordReportDataset(input: { runId: string; dataset: Partial<RunDataset> & { name: string } }): Promise<void> {
      await recordRunDataset(db, input.runId, input.dataset);
    },

    /**
     * `running → rendering`, charging the PDF and Excel outputs (free quota, or credits with the
     * report's `useCredit`). Answers whether the documents are watermarked (free quota), or null when
     * the run was cancelled meanwhile. Quota and credit errors are thrown with their codes.
     */
    async startReportRender(input: { runId: string }): Promise<{ watermark: boolean } | null> {
      const run = await loadRun(input.runId);
      const version = await db.getRepository(ReportVersionEntity).findOneBy({ reportId: run.reportId, version: run.reportVersion });
      if (!version) throw new AppError('ERR_RPT_002', `Report version ${run.reportVersion} no longer exists`);
      const documents = run.formats.filter((f) => f !== 'csv').length;
      const billing = await startRendering(db, run.id, {
        projectId: run.projectId,
        documents,
        useCredit: version.definition.useCredit,
        freeLimit: deps.freeDocumentsPerMonth,
      });
      return billing === null ? null : { watermark: billing === 'free' };
    },

    /**
     * Records the outputs and moves the run on: `delivering` when it has channels, else `completed`.
     * Answers where the run is, or null when it was cancelled meanwhile (nothing recorded).
     */
    async completeReportRun(input: { runId: string; outputs: RenderedReportOutput[] }): Promise<'completed' | 'delivering' | null> {
      const run = await loadRun(input.runId);
      if (run.status === 'completed' || run.status === 'delivering') return run.status;
      if (run.status !== 'rendering') return null;
      const expiresAt = new Date(Date.now() + deps.artefactRetentionDays * 86_400_000);
      const next = run.channelIds.length > 0 ? 'delivering' : 'completed';
      return (await completeWithOutputs(db, run, input.outputs, expiresAt, next)) ? next : null;
    },

    /** Ends the run `failed` at a stage with the error that stopped it (never a remote server's body). */
    async failReportRun(input: { runId: string; stage: FailedStage; error: { code: string; message: string } }): Promise<void> {
      await moveReportRun(db, { runId: input.runId, status: 'failed', failedStage: input.stage, error: { code: input.error.code, message: message(input.error.message) } });
    },

    /** `running → skipped` (skipIfEmpty: every dataset returned no rows). */
    async skipReportRun(input: { runId: string; reason: string }): Promise<void> {
      await moveReportRun(db, { runId: input.runId, status: 'skipped', skipReason: input.reason });
    },

    /** Ends the run `cancelled` (the workflow was cancelled); a no-op when the API already did. */
    async cancelReportRun(input: { runId: string }): Promise<void> {
      await moveReportRun(db, { runId: input.runId, status: 'cancelled' });
      // Agents stop the run's queries at their next heartbeat (its answer's `cancel`); queued ones are never leased.
      await cancelTasks(db, { runId: input.runId });
    },
  };
}

export type ReportRunActivities = ReturnType<typeof createReportRunActivities>;
