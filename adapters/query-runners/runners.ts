import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type {
  DatasourceKind,
  CsvConfig,
  HttpJsonConfig,
  HttpJsonSecrets,
  QueryRunner,
  SqlConnectionConfig,
  SqlConnectionSecrets,
} from '../../domain/reporting/query-runner';
import type { OutboundGuard } from '../http/outbound';
import type { ArtefactStorage } from '../storage/storage';
import { createCsvRunner } from './csv-runner';
import { createHttpJsonRunner } from './http-json-runner';
import { createMysqlRunner } from '@formwork/query-runners';
import { createPostgresRunner } from '@formwork/query-runners';

export interface QueryRunnerInput {
  kind: DatasourceKind;
  config: SqlConnectionConfig;
  secrets: SqlConnectionSecrets & HttpJsonSecrets;
  /** Every connection goes through it (OUTBOUND_ALLOWLIST decides which private hosts may be reached). */
  guard: OutboundGuard;
  /** http_json runs: rowsPath and transform are evaluated there, charged to `tenant` (the project). */
  evaluator?: Evaluator;
  tenant?: string;
  /** csv: where an uploaded file is read (its key names the project and the datasource). */
  storage?: ArtefactStorage;
  datasourceId?: string;
}

/** The direct runner for a datasource kind; the caller closes it. */
export function createQueryRunner(input: QueryRunnerInput): QueryRunner {
  switch (input.kind) {
    case 'postgres':
      return createPostgresRunner(input);
    case 'mysql':
      return createMysqlRunner(input);
    case 'http_json':
      return createHttpJsonRunner({ ...input, config: input.config as unknown as HttpJsonConfig });
    case 'csv':
      return createCsvRunner({ ...input, config: input.config as unknown as CsvConfig });
    default:
      throw new AppError('ERR_DS_002', `Datasource kind ${input.kind} is not supported yet`, {
        errors: [{ path: 'kind', code: 'UNSUPPORTED_KIND', message: 'not supported yet' }],
      });
  }
}
