import type { Evaluator } from '../../domain/evaluation';
import type { ArtefactStorage } from '../storage/storage';
import type { DatasourceKind } from '../../domain/reporting/query-runner';

/**
 * A datasource's stored settings, decrypted: what the API's runners (api/reporting/probes.ts, each
 * call a probe on the query task queue) are opened with. `tenant` is the project.
 */
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
