/**
 * The PostgreSQL and MySQL query runners (docs/reporting.md "Datasource kinds"), their wire guard
 * and the NDJSON writer they stream rows through: used by the server's query worker
 * (adapters/query-runners/runners.ts) and by the reporting agent (agent/src/execute.ts).
 */
export * from './postgres-runner';
export * from './mysql-runner';
export * from './ndjson-sink';
export * from './wire-guard';
export type { TcpGuard } from './tcp-guard';
