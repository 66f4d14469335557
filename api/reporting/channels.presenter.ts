import type { ChannelEntity, ChannelLastTest } from '../../db/reporting/channel.entity';

/** A channel's config as answers show it: a webhook's header values are secrets, each `{set: true}`. */
function presentConfig(config: Record<string, unknown>): Record<string, unknown> {
  const headers = config.headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return config;
  return { ...config, headers: Object.fromEntries(Object.keys(headers).map((name) => [name, { set: true }])) };
}

/** A channel as every answer shows it: secrets only as `{set: true, updatedAt}`, header values as `{set: true}`, never their values. */
export function presentChannel(c: ChannelEntity) {
  return {
    id: c.id,
    shortId: c.shortId,
    name: c.name,
    kind: c.kind,
    config: presentConfig(c.config),
    secrets: Object.fromEntries(Object.entries(c.secrets).map(([name, s]) => [name, { set: true, updatedAt: s.updatedAt }])),
    isActive: c.isActive,
    lastTest: c.lastTest,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** The answer of POST …/test (docs/reporting.md "Channels"): `ok: false` is an answer too. */
export function presentTest(t: ChannelLastTest) {
  return { ok: t.ok, durationMs: t.durationMs, ...(t.error ? { error: t.error } : {}), ...(t.details ? { details: t.details } : {}) };
}
