import type { GateEntity } from '../../db/flow/gate.entity';
import type { GateSchemaVersionEntity } from '../../db/flow/gate-schema-version.entity';
import { maskChannel, maskRenderConfig } from './gate-secrets';
import { pageMeta } from '../page-meta';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The full gate: every field of the spec's Gate table plus its identity, version and circuit.
 * Secrets are write-only: `renderConfig.secret`, channel secrets and header values read `{"set": true}`.
 */
export function presentGate(g: GateEntity) {
  return {
    id: g.id,
    shortId: g.shortId,
    slug: g.slug,
    name: g.name,
    description: g.description,
    status: g.status,
    validationMode: g.validationMode,
    schema: g.schema,
    businessRules: g.businessRules,
    freetextConfig: g.freetextConfig,
    schemaVersion: g.schemaVersion,
    renderMode: g.renderMode,
    renderTemplateId: g.renderTemplateId,
    renderConfig: maskRenderConfig(g.renderConfig),
    approvalMode: g.approvalMode,
    approvalConfig: g.approvalConfig,
    deliveryChannels: g.deliveryChannels.map(maskChannel),
    maxSubmissionsPerMinute: g.maxSubmissionsPerMinute,
    notificationMode: g.notificationMode,
    notificationDigestMinutes: g.notificationDigestMinutes,
    circuitBreakerEnabled: g.circuitBreakerEnabled,
    maxFailures: g.maxFailures,
    cooldownSeconds: g.cooldownSeconds,
    circuit: { state: g.circuitState, consecutiveFailures: g.consecutiveFailures, openUntil: iso(g.circuitOpenUntil) },
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
  };
}

/** Spec: `{data, meta}` as the other paginated lists of the API. */
export function presentPage<T, R>(items: T[], total: number, page: number, limit: number, present: (item: T) => R) {
  return { data: items.map(present), meta: pageMeta(total, page, limit) };
}

export function presentVersion(v: GateSchemaVersionEntity) {
  return {
    version: v.version,
    validationMode: v.validationMode,
    schema: v.schema,
    businessRules: v.businessRules,
    freetextConfig: v.freetextConfig,
    source: v.source,
    sourceTemplateId: v.sourceTemplateId,
    createdAt: v.createdAt.toISOString(),
  };
}
