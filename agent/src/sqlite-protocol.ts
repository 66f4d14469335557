import type { ResultColumn } from '@formwork/wire';

/** Messages between agent/src/sqlite-runner.ts and the process it forks (agent/src/sqlite-child.ts). */
export type SqliteRequest =
  | { op: 'test'; path: string }
  | { op: 'schema'; path: string }
  | { op: 'run'; path: string; sql: string; values: unknown[]; maxRows: number };

export interface SqliteCatalog {
  tables: Array<{ name: string; type: 'table' | 'view' }>;
  columns: Array<{ table: string; name: string; dataType: string; nullable: boolean; ordinal: number }>;
}

export type SqliteReply =
  | { type: 'result'; value: { latencyMs: number; serverVersion: string } | SqliteCatalog }
  | { type: 'columns'; columns: ResultColumn[] }
  | { type: 'rows'; rows: unknown[][] }
  | { type: 'end' }
  | { type: 'error'; code: 'ERR_QRY_006' | 'ERR_QRY_009'; message: string; dbCode?: string; reason?: string };
