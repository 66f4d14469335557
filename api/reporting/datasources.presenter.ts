import type { DatasourceEntity, DatasourceLastTest } from '../../db/reporting/datasource.entity';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A datasource as every answer shows it: secrets only as `{set: true, updatedAt}`, http_json `defaultHeaders` values as `{set: true}`, never their values. */
export function presentDatasource(d: DatasourceEntity) {
  return {
    id: d.id,
    shortId: d.shortId,
    name: d.name,
    description: d.description,
    kind: d.kind,
    connectionMode: d.connectionMode,
    agentId: d.agentId,
    config: d.config.defaultHeaders ? { ...d.config, defaultHeaders: Object.fromEntries(Object.keys(d.config.defaultHeaders).map((name) => [name, { set: true }])) } : d.config,
    secrets: Object.fromEntries(Object.entries(d.secrets).map(([name, s]) => [name, { set: true, updatedAt: s.updatedAt }])),
    secretMode: d.secretMode,
    pool: d.pool,
    defaults: d.defaults,
    lastTest: d.lastTest,
    schemaRefreshedAt: iso(d.schemaRefreshedAt),
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

/** The answer of POST …/test (docs/reporting.md "Datasources"). */
export function presentTest(t: DatasourceLastTest, executedBy: 'server' | 'agent' = 'server') {
  return {
    ok: t.ok,
    latencyMs: t.latencyMs ?? null,
    serverVersion: t.serverVersion ?? null,
    ...(t.error ? { error: t.error } : {}),
    executedBy,
    at: t.at,
  };
}
