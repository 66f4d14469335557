/**
 * The port every datasource driver implements (docs/reporting.md "Datasource kinds"), in
 * `@formwork/wire` (packages/wire/src/query-runner.ts): the server's runners (adapters/query-runners,
 * `@formwork/query-runners`) and the agent's implement it. Types only.
 */
export type {
  CompiledQuery,
  ConnectionTest,
  CsvConfig,
  DatasourceKind,
  DiscoveredSchema,
  HttpJsonConfig,
  HttpJsonSecrets,
  QueryLimits,
  QueryResultSummary,
  QueryRunner,
  ResultColumn,
  RowSink,
  SqlConnectionConfig,
  SqlConnectionSecrets,
} from '@formwork/wire';
export { AGENT_DATASOURCE_KINDS } from '@formwork/wire';
