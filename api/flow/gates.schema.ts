import Joi from 'joi';
import type { ApprovalConfig, ApprovalMode, GateStatus, NotificationMode, RenderMode } from '../../domain/flow/gate-settings';
import type { BusinessRule, FreetextConfig, ObjectSchema, ValidationMode } from '../../domain/flow/gate.types';
import type { DeliveryChannelInput } from './gate-secrets';
import { outputSchema } from '../documents/output.schema';

/**
 * Request shapes of the gate endpoints (spec, Gate table and Limits §4). Joi checks the outer
 * shape and the limits; the schema, rules and freetext patterns are checked in depth by
 * domain/flow/definition-check.ts, which answers 422 FLOW.GATE_VALIDATION_FAILED with details.
 */

const rule = Joi.object<BusinessRule>({
  id: Joi.string().required(),
  name: Joi.string().allow(''),
  expression: Joi.string().required(),
  message: Joi.string().required(),
});
/** Spec: at most 20 business rules. */
const businessRules = Joi.array().items(rule).max(20);
/** Checked in depth by the definition check; here only "an object". */
const objectSchema = Joi.object().unknown(true);
const freetextConfig = Joi.object().unknown(true);

const approvalConfig = Joi.object<ApprovalConfig>({
  approvers: Joi.array()
    .items(Joi.object({ email: Joi.string().email({ tlds: false }).max(254).required(), name: Joi.string().max(255) }))
    .min(1)
    .required(),
  requiredApprovals: Joi.number().integer().min(1).default(1),
  timeoutMinutes: Joi.number().integer().min(1).max(60 * 24 * 30).required(),
  onTimeout: Joi.string().valid('reject', 'approve').required(),
});

/** Write-only secrets (api/flow/gate-secrets.ts): the value, or `{"set": true}` to keep the stored one. */
const storedSecret = Joi.object({ set: Joi.boolean().valid(true).required() });

const deliveryChannel = Joi.object<DeliveryChannelInput>({
  type: Joi.string().valid('webhook').required(),
  url: Joi.string().uri({ scheme: ['http', 'https'] }).max(2048).required(),
  /** Required for a new channel; a stored channel with the same url keeps its secret (checked in gate-secrets.ts). */
  secret: Joi.alternatives(Joi.string().min(8).max(256), storedSecret),
  headers: Joi.object().pattern(/^[A-Za-z0-9-]{1,100}$/, Joi.alternatives(Joi.string().max(1000), storedSecret)).max(20),
});

/**
 * Free-form, but its `secret` (the custom render API's signing key) is a string, `null` (remove) or
 * `{"set": true}`; `output` is the generation's output object (native renders, docs/documents.md
 * "Output options") and `useCredit` spends a credit per rendered run instead of a free document
 * (docs/documents.md "Quotas and the watermark on every output").
 */
const renderConfig = Joi.object({
  secret: Joi.alternatives(Joi.string().min(1).max(256), storedSecret).allow(null),
  output: outputSchema.allow(null),
  useCredit: Joi.boolean().description('Each rendered run spends one credit (no watermark) instead of one of the month\'s free documents'),
}).unknown(true);

export interface GateSettingsInput {
  name?: string;
  description?: string | null;
  validationMode?: ValidationMode;
  freetextConfig?: FreetextConfig | null;
  renderMode?: RenderMode;
  renderTemplateId?: string | null;
  renderConfig?: Record<string, unknown> | null;
  approvalMode?: ApprovalMode;
  approvalConfig?: ApprovalConfig | null;
  deliveryChannels?: DeliveryChannelInput[];
  maxSubmissionsPerMinute?: number | null;
  notificationMode?: NotificationMode;
  notificationDigestMinutes?: number;
  circuitBreakerEnabled?: boolean;
  maxFailures?: number;
  cooldownSeconds?: number;
}

const settings = {
  description: Joi.string().max(1000).allow('', null),
  validationMode: Joi.string().valid('variables', 'freetext'),
  freetextConfig: freetextConfig.allow(null),
  renderMode: Joi.string().valid('none', 'native', 'custom_api'),
  renderTemplateId: Joi.string().max(200).allow(null),
  renderConfig: renderConfig.allow(null),
  approvalMode: Joi.string().valid('auto', 'manual'),
  approvalConfig: approvalConfig.allow(null),
  deliveryChannels: Joi.array().items(deliveryChannel).max(10),
  maxSubmissionsPerMinute: Joi.number().integer().min(1).max(1000).allow(null),
  notificationMode: Joi.string().valid('immediate', 'digest'),
  notificationDigestMinutes: Joi.number().integer().min(1).max(60),
  circuitBreakerEnabled: Joi.boolean(),
  maxFailures: Joi.number().integer().min(1).max(1000),
  cooldownSeconds: Joi.number().integer().min(60).max(7 * 24 * 3600),
};

export interface CreateGateInput extends GateSettingsInput {
  name: string;
  schema?: ObjectSchema | null;
  businessRules?: BusinessRule[];
}

export const createGateSchema = Joi.object<CreateGateInput, true>({
  name: Joi.string().trim().min(1).max(255).required(),
  schema: objectSchema.allow(null),
  businessRules,
  ...settings,
});

export interface UpdateGateInput extends GateSettingsInput {
  status?: GateStatus;
}

/** Same fields as create, all optional, plus status; schema and rules only through PUT /schema. */
export const updateGateSchema = Joi.object<UpdateGateInput, true>({
  name: Joi.string().trim().min(1).max(255),
  status: Joi.string().valid('active', 'paused', 'archived'),
  ...settings,
}).min(1);

export interface PutSchemaInput {
  schema: ObjectSchema;
  businessRules?: BusinessRule[];
}

export const putSchemaSchema = Joi.object<PutSchemaInput, true>({ schema: objectSchema.required(), businessRules });

export interface ImportSchemaInput {
  templateId: string;
}

export const importSchemaSchema = Joi.object<ImportSchemaInput, true>({ templateId: Joi.string().min(1).max(200).required() });

export const GATE_SORT_FIELDS = ['createdAt', 'name', 'updatedAt'] as const;

export interface ListGatesQuery {
  page: number;
  limit: number;
  search?: string;
  status?: GateStatus;
  sortBy: (typeof GATE_SORT_FIELDS)[number];
  sortOrder: 'asc' | 'desc';
}

/** Spec, Limits §2: page (default 1), limit 1 to 100 (default 25); out-of-range values are refused. */
export const listGatesSchema = Joi.object<ListGatesQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(25),
  search: Joi.string().trim().max(255).allow(''),
  status: Joi.string().valid('active', 'paused', 'archived'),
  sortBy: Joi.string().valid(...GATE_SORT_FIELDS).default('createdAt'),
  sortOrder: Joi.string().lowercase().valid('asc', 'desc').default('desc'),
});
