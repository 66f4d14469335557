import type { DiscoveredSchema } from './query-runner';

/**
 * Discovery lists at most this many tables and columns; `truncated` says when there were more (docs/reporting.md
 * "Limits").
 */
export const MAX_DISCOVERED_TABLES = 2_000;
export const MAX_DISCOVERED_COLUMNS = 50_000;

export interface CatalogTable {
  schema: string;
  name: string;
  type: 'table' | 'view';
}

export interface CatalogColumn {
  schema: string;
  table: string;
  name: string;
  dataType: string;
  nullable: boolean;
  ordinal: number;
}

/**
 * The schema object from a database catalogue, as every runner reads it: tables in order (read up
 * to one past the cap, so a cut list is known), then columns in table and ordinal order (the same);
 * columns of tables left out are dropped.
 */
export function assembleSchema(tables: CatalogTable[], columns: CatalogColumn[], now = new Date()): DiscoveredSchema {
  const kept = tables.slice(0, MAX_DISCOVERED_TABLES);
  const byTable = new Map<string, DiscoveredSchema['tables'][number]>();
  const result = kept.map((t) => {
    const table = { schema: t.schema, name: t.name, type: t.type, columns: [] as DiscoveredSchema['tables'][number]['columns'] };
    byTable.set(JSON.stringify([t.schema, t.name]), table);
    return table;
  });
  for (const c of columns.slice(0, MAX_DISCOVERED_COLUMNS)) {
    byTable.get(JSON.stringify([c.schema, c.table]))?.columns.push({ name: c.name, dataType: c.dataType, nullable: c.nullable, ordinal: c.ordinal });
  }
  return { refreshedAt: now.toISOString(), tables: result, truncated: tables.length > MAX_DISCOVERED_TABLES || columns.length > MAX_DISCOVERED_COLUMNS };
}
