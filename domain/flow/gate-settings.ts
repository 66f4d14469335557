/**
 * A gate's settings as plain types (spec, Gate): what the API accepts, the run workflow and its
 * activities act on, and `db/flow/gate.entity.ts` stores. Kept out of the entity file so that
 * workflows and other layers need no TypeORM import to name them.
 */

export type GateStatus = 'active' | 'paused' | 'archived';
export type RenderMode = 'none' | 'native' | 'custom_api';
export type ApprovalMode = 'auto' | 'manual';
export type NotificationMode = 'immediate' | 'digest';

export interface ApprovalConfig {
  approvers: Array<{ email: string; name?: string }>;
  requiredApprovals?: number;
  timeoutMinutes: number;
  onTimeout: 'reject' | 'approve';
}

export interface DeliveryChannel {
  type: 'webhook';
  url: string;
  /** HMAC key of the delivery signature; encrypted at rest, write-only (presented as `{set: true}`). */
  secret: string;
  /** Extra request headers; values encrypted at rest and write-only like the secret. */
  headers?: Record<string, string>;
}

/** Why a schema version was made (`flow_gate_schema_versions.source`). */
export type SchemaVersionSource = 'create' | 'schema' | 'import' | 'settings';
