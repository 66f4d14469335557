import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { DataSource } from 'typeorm';
import { DatasourceEntity } from '../../db/reporting/datasource.entity';
import { AppError } from '../../domain/errors';
import { isConnectionFailure } from '@formwork/wire';
import type { Evaluator } from '../../domain/evaluation';
import type { CompiledQuery, QueryLimits, ResultColumn, RowSink, SqlConnectionConfig } from '../../domain/reporting/query-runner';
import { createOutboundGuard } from '../../adapters/http/outbound';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { createQueryRunner } from '../../adapters/query-runners/runners';
import { isUuid } from '../../domain/ids';
import { withHeartbeat } from '../heartbeat';

/**
 * The `runDirectQuery` activity of the `query` task queue (docs/reporting.md, "Query execution on
 * workers"; docs/reporting.md "Temporal workflows", "Read-only execution"). Its input names the datasource by id and
 * carries no secret: the activity loads the row by `(project_id, id)` and decrypts the password itself, so no
 * credential ever reaches a Temporal payload or the workflow history.
 */
export interface RunDirectQueryInput {
  projectId: string;
  runId: string;
  /** The dataset's name in the report: the result file's name. */
  datasetName: string;
  datasourceId: string;
  /** The compiled statement; its bind values are the run's parameter values (data, not secrets). */
  compiled: CompiledQuery;
  /** Capped by the system settings (REPORTING_QUERY_TIMEOUT_SECONDS, REPORTING_MAX_ROWS, REPORTING_RESULT_MAX_BYTES). */
  limits: QueryLimits;
}

export interface RunDirectQueryResult {
  /** Storage key of the gzip-compressed NDJSON result. */
  key: string;
  rowCount: number;
  truncated: boolean;
  /** Uncompressed NDJSON bytes. */
  bytes: number;
  durationMs: number;
  columns: ResultColumn[];
}

export interface QueryActivityDeps {
  db: DataSource;
  storage: ArtefactStorage;
  outboundAllowlist: string[];
  /** http_json queries: rowsPath and transform (tenant JSONata) are evaluated in the evaluation workers. */
  evaluator?: Evaluator;
  /** The system maximums (config.reporting). */
  limits: { queryTimeoutSeconds: number; maxRows: number; resultMaxBytes: number };
}

/**
 * A cancel (a cancelled run) reaches the activity in the answer to a heartbeat: beating every 2 s,
 * with the query worker's throttle at 1 s (worker/create-workers.ts), a cancelled run's statement
 * is cancelled within seconds instead of after the SDK's default throttle (80% of the heartbeat timeout).
 */
const HEARTBEAT_MS = 2000;
const DATASET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,99}$/;

/** Result files: `reporting/<projectId>/runs/<runId>/datasets/<datasetName>.ndjson.gz`. */
export const datasetResultKey = (projectId: string, runId: string, datasetName: string) =>
  `reporting/${projectId}/runs/${runId}/datasets/${datasetName}.ndjson.gz`;

/**
 * A connection failure (packages/wire/src/connection-errors.ts, the list the agent uses too) becomes a
 * retryable failure of the same code; every other error passes to the failure mapper as it is.
 */
function retryableIfConnection(err: unknown): unknown {
  if (!isConnectionFailure(err)) return err;
  return ApplicationFailure.create({ message: err.message, type: err.code, nonRetryable: false, details: [err.relatedInfo] });
}

/** NDJSON text gathered before one write into gzip: zlib runs once per write, so one write per row cost more than the query. */
const GZIP_CHUNK = 64 * 1024;

/**
 * A RowSink that compresses into the stream storage reads, waiting while it is behind. Lines are
 * gathered into writes of about GZIP_CHUNK; `flush` writes the rest (before `gzip.end()`).
 */
function gzipSink(gzip: Gzip, stored: Promise<void>): RowSink & { flush(): Promise<void> } {
  let text = '';
  const write = async (chunk: string) => {
    if (chunk === '' || gzip.write(chunk)) return;
    await Promise.race([once(gzip, 'drain'), stored.then(() => Promise.reject(new Error('Result storage ended before the result')))]);
  };
  return {
    async write(line) {
      text += line;
      if (text.length < GZIP_CHUNK) return;
      const chunk = text;
      text = '';
      await write(chunk);
    },
    async flush() {
      const chunk = text;
      text = '';
      await write(chunk);
    },
  };
}

async function loadDatasource(db: DataSource, projectId: string, id: string): Promise<DatasourceEntity> {
  const ds = isUuid(projectId) && isUuid(id) ? await db.getRepository(DatasourceEntity).findOneBy({ projectId, id }) : null;
  if (!ds) throw new AppError('ERR_DS_001');
  if (ds.connectionMode !== 'direct') throw new AppError('ERR_DS_005', 'This datasource is reached through its agent, not directly', { field: 'connectionMode' });
  return ds;
}

export function createQueryActivities(deps: QueryActivityDeps) {
  const guard = createOutboundGuard(deps.outboundAllowlist);
  return {
    /**
     * Runs one read-only statement against a direct datasource and streams its rows, gzip-compressed
     * NDJSON, into artefact storage while counting them. A retried attempt writes the same key again.
     */
    async runDirectQuery(input: RunDirectQueryInput): Promise<RunDirectQueryResult> {
      if (!DATASET_NAME.test(input.datasetName)) {
        throw new AppError('ERR_VALID_001', 'datasetName must be 1-100 letters, digits, _ or -', { field: 'datasetName' });
      }
      const key = datasetResultKey(input.projectId, input.runId, input.datasetName);
      const ds = await loadDatasource(deps.db, input.projectId, input.datasourceId);
      const limits: QueryLimits = {
        timeoutMs: Math.min(input.limits.timeoutMs, deps.limits.queryTimeoutSeconds * 1000),
        maxRows: Math.min(input.limits.maxRows, deps.limits.maxRows),
        maxBytes: Math.min(input.limits.maxBytes, deps.limits.resultMaxBytes),
        onRowLimit: input.limits.onRowLimit,
      };
      const runner = createQueryRunner({
        kind: ds.kind,
        config: ds.config as unknown as SqlConnectionConfig,
        secrets: Object.fromEntries(Object.entries(ds.secrets).map(([name, secret]) => [name, secret.value])),
        guard,
        evaluator: deps.evaluator,
        tenant: input.projectId,
        storage: deps.storage,
        datasourceId: ds.id,
      });
      const ctx = Context.current();
      return withHeartbeat(() => ctx.heartbeat(), HEARTBEAT_MS, async () => {
        // Level 1: the result is read back once by the render step; speed matters more than its size.
        const gzip = createGzip({ level: 1 });
        // Storage may attach its own listeners only later (after creating its file): an error destroyed into the stream must not go unhandled.
        gzip.on('error', () => undefined);
        const stored = deps.storage.put(key, gzip, 'application/gzip');
        stored.catch(() => undefined); // awaited below; a failure here also fails the sink's next write
        try {
          ctx.heartbeat();
          const sink = gzipSink(gzip, stored);
          const summary = await runner.run(input.compiled, limits, sink, ctx.cancellationSignal);
          await sink.flush();
          gzip.end();
          await stored;
          return { key, rowCount: summary.rowCount, truncated: summary.truncated, bytes: summary.bytes, durationMs: summary.durationMs, columns: summary.columns };
        } catch (err) {
          gzip.destroy(err instanceof Error ? err : new Error(String(err)));
          await stored.catch(() => undefined);
          await deps.storage.delete(key).catch(() => undefined);
          throw retryableIfConnection(err);
        } finally {
          await runner.close().catch(() => undefined);
        }
      });
    },
  };
}
