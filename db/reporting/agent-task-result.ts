/**
 * A completed `query` task's result (what the agent uploaded, as api/agents/agent-protocol.service.ts
 * recorded it) in the shape `runDirectQuery` answers, so a run's dataset reads the same whoever ran it.
 * The API completes the waiting activity with it; the activity answers it for an earlier attempt's task
 * that completed after that attempt had timed out.
 */
export function agentQueryResult(resultKey: string | null, result: Record<string, unknown> | null) {
  const r = (result ?? {}) as { columns?: Array<{ name: string; type: string }>; rowCount?: number; truncated?: boolean; bytes?: number; durationMs?: number };
  return {
    key: resultKey ?? '',
    rowCount: r.rowCount ?? 0,
    truncated: r.truncated ?? false,
    bytes: r.bytes ?? 0,
    durationMs: r.durationMs ?? 0,
    columns: (r.columns ?? []).map((c) => ({ name: c.name, dataType: c.type })),
  };
}
