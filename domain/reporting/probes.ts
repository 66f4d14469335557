import type { CompiledQuery, ConnectionTest, QueryLimits, QueryResultSummary } from './query-runner';

/**
 * What the API asks of the query worker about a tenant's datasource, and what it answers
 * (api/reporting/probes.ts starts the probe, activities/reporting/probe.activity.ts runs it;
 * docs/reporting.md "Where datasource calls run").
 */
type ProbeOp = 'test' | 'schema' | 'run';

export interface ProbeTarget {
  kind: string;
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  /** csv uploads: the datasource's id (the file's key). */
  datasourceId?: string;
}

export interface ProbeInput {
  probeId: string;
  projectId: string;
  op: ProbeOp;
  /** JSON of a ProbeTarget, sealed (`enc:v1:…`). */
  sealedTarget: string;
  /** `run`: the compiled statement and its limits (truncating: a preview shows the first rows). */
  compiled?: CompiledQuery;
  limits?: QueryLimits;
}

export type ProbeOutput =
  | { op: 'test'; test: ConnectionTest }
  /** The DiscoveredSchema as JSON in storage. */
  | { op: 'schema'; key: string }
  /** The rows as NDJSON in storage (at most `limits.maxBytes`). */
  | { op: 'run'; key: string; summary: QueryResultSummary };

/** Where a probe's result waits for the API: `reporting/<projectId>/probes/<probeId>`. */
export const probeResultKey = (projectId: string, probeId: string) => `reporting/${projectId}/probes/${probeId}`;
