import { createOutboundGuard } from '../activities/http/outbound';
import { createQueryRunner } from '../activities/reporting/runners';
import type { Config } from '../domain/config';
import type { Evaluator } from '../domain/evaluation';
import type { ArtefactStorage } from '../activities/storage/storage';
import type { DatasourceKind, QueryRunner, SqlConnectionConfig } from '../domain/reporting/query-runner';

/** A datasource's stored settings, decrypted: what a direct runner is opened with. */
export interface RunnerTarget {
  kind: DatasourceKind;
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  /** http_json query runs (previews): where rowsPath and transform are evaluated, charged to `tenant`. */
  evaluator?: Evaluator;
  tenant?: string;
  /** csv: the uploaded file's storage and datasource id. */
  storage?: ArtefactStorage;
  datasourceId?: string;
}

/**
 * Opens the direct runner of a datasource (activities/reporting/runners.ts) behind the process's
 * outbound guard: a host on loopback or a private range is refused unless OUTBOUND_ALLOWLIST lets
 * it through (docs/reporting.md "Datasources"). The API's connection test and schema discovery use it.
 */
export function directRunners(config: Config): (target: RunnerTarget) => QueryRunner {
  const guard = createOutboundGuard(config.outbound.allowlist);
  return (target) => createQueryRunner({ kind: target.kind, config: target.config as unknown as SqlConnectionConfig, secrets: target.secrets, guard, evaluator: target.evaluator, tenant: target.tenant, storage: target.storage, datasourceId: target.datasourceId });
}
