import { API_KEY_INACTIVE_REASONS } from '../../domain/identity/api-key-state';
import { REPORTING_RESOURCE_SCHEMAS } from '../reporting/reporting.resources';
import type { JsonSchema } from './operation';
import { REPORTING_SOURCE_SCHEMAS } from '../reporting/sources.resources';

/**
 * JSON Schemas of the main resources as the presenters write them (domain/documents/presenter.ts,
 * api/flow/*.presenter.ts, api/templates/templates.presenter.ts, api/identity/api-keys.presenter.ts,
 * api/webhooks/webhooks.presenter.ts, api/reporting/runs.presenter.ts). Each is a component of the
 * document (`components.schemas`), referenced by the operations that answer it;
 * tests/integration/openapi/responses.test.ts validates real answers against them, so a field the
 * presenter adds, drops or retypes fails there. Objects list every field (no others allowed);
 * nested free-form parts (payloads, configurations, metadata) stay open.
 */

const str = { type: 'string' };
const uuid = { type: 'string', format: 'uuid' };
const time = { type: 'string', format: 'date-time' };
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
const open = { type: 'object', additionalProperties: true };
const anyValue = {};

/** A closed object whose `required` fields are always present and `optional` ones only sometimes. */
function object(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}, description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), required: Object.keys(required), properties: { ...required, ...optional }, additionalProperties: false };
}

const documentJob = object(
  {
    jobId: uuid,
    status: { type: 'string', enum: ['queued', 'processing', 'completed', 'failed', 'cancelled'] },
    format: str,
    templateId: { ...nullable(str), description: 'Null for a merge (POST /api/documents/merge)' },
    templateVersion: nullable({ type: 'integer' }),
    filename: nullable(str),
    watermarked: { type: 'boolean', description: 'Rendered on the free plan' },
    metadata: open,
    createdAt: time,
    completedAt: nullable(time),
  },
  {
    batchId: uuid,
    kind: { type: 'string', enum: ['merge'], description: 'Present on a merge job only (POST /api/documents/merge)' },
    downloadUrl: { type: 'string', format: 'uri', description: 'A signed link, once the job is done' },
    expiresAt: { ...time, description: 'When the download link stops working' },
    artefactExpired: { type: 'boolean', description: 'Retention removed the file: there is no link any more' },
    errorCode: { type: 'string', description: 'A failed job\'s catalogued error code (`ERR_LIMIT_001`, `ERR_RENDER_001`, …; docs/errors.md)' },
    errorMessage: str,
    retryOf: { ...uuid, description: 'The failed job this one retries' },
    output: { ...open, description: 'The output options asked for (docs/documents.md "Output options"); passwords are write-only (`{"set": true}`), attachments by name and size' },
  },
  'A document job (domain/documents/presenter.ts presentJob)',
);

const batchFields = {
  batchId: uuid,
  status: str,
  templateId: str,
  format: str,
  totalJobs: { type: 'integer' },
  completedJobs: { type: 'integer' },
  failedJobs: { type: 'integer' },
  cancelledJobs: { type: 'integer' },
  metadata: open,
  createdAt: time,
  completedAt: nullable(time),
};

/** A batch's `output.archive` (domain/documents/batch-archive.ts presentArchive; docs/documents.md "Batch archives"). */
const batchArchive = object(
  {
    format: { type: 'string', enum: ['zip', 'pdf'] },
    status: { type: 'string', enum: ['pending', 'ready', 'failed', 'expired'], description: '`pending` until every job has ended and the archive is built' },
  },
  {
    downloadUrl: { type: 'string', format: 'uri', description: 'A signed link, once the archive is ready' },
    expiresAt: { ...time, description: 'When the download link stops working' },
    size: { type: 'integer', description: 'Bytes of the archive' },
    documents: { type: 'integer', description: 'Documents it holds' },
    leftOut: {
      type: 'array',
      description: 'The jobs it does not hold, in batch order: `failed`, `cancelled`, `expired` (retention removed the file) or `missing` (the job was deleted while the archive was built)',
      items: object({ jobId: uuid, status: str }),
    },
    errorCode: { type: 'string', description: 'Why the archive failed: `ERR_OUTPUT_005` past a limit, `ERR_OUTPUT_008` nothing to archive, …' },
    errorMessage: str,
  },
  'The ZIP or merged PDF of the batch\'s documents that `output.archive` asked for',
);

const documentBatch = object(
  batchFields,
  { documents: { type: 'array', items: object({ jobId: uuid, status: str }, { downloadUrl: { type: 'string', format: 'uri' } }) }, archive: batchArchive },
  'A batch of document jobs with its counts and (when read) its documents',
);

const acceptedBatch = object({ ...batchFields, statusUrl: { type: 'string', format: 'uri' } }, { archive: batchArchive }, 'The batch as created, with its status URL');

const documentJobList = object({ jobs: { type: 'array', items: { $ref: '#/components/schemas/DocumentJob' } }, total: { type: 'integer' }, offset: { type: 'integer' }, limit: { type: 'integer' } }, {}, 'A page of document jobs');

const enumOf = (values: string[]) => ({ type: 'string', enum: values });
const detailCodes = ['REQUIRED', 'TYPE', 'MIN', 'MAX', 'MIN_LENGTH', 'MAX_LENGTH', 'PATTERN', 'ENUM', 'FORMAT', 'UNKNOWN_FIELD', 'RULE'];
const layerStatus = enumOf(['pass', 'fail', 'skipped']);
const validationDetail = object(
  { field: { type: 'string', description: 'A path into the payload (`items[2].price`), `text` in freetext mode, or the rule id' }, message: str, code: enumOf(detailCodes) },
  { ruleId: str },
  'One problem of a validation (docs/flow.md "ObjectSchema")',
);
const validationStep = object(
  {
    name: { type: 'string', description: 'The layer (`schema`, `freetext`) or the rule\'s name' },
    status: { type: 'string', enum: ['pass', 'fail', 'error', 'skipped'] },
    durationMs: { type: 'number' },
    errors: { type: 'array', items: validationDetail },
  },
  { ruleId: str, expression: str },
  'One step of a validation: a layer or a business rule',
);
const validation = {
  type: 'object',
  required: ['validation_id', 'valid', 'layers'],
  properties: {
    validation_id: str,
    valid: { type: 'boolean' },
    layers: object({ schema: layerStatus, business_rules: layerStatus }),
    validated_payload: anyValue,
    failedLayer: { type: 'string', enum: ['schema', 'business_rules'] },
    details: { type: 'array', items: validationDetail },
    steps: { type: 'array', items: validationStep },
    durationMs: { type: 'number' },
  },
  additionalProperties: false,
};

/** POST /api/flow/gates/:id/validate, a valid payload (api/flow/runs.presenter.ts presentValidateResult). */
const flowValidated = object(
  {
    success: { type: 'boolean', enum: [true] },
    runId: uuid,
    shortId: str,
    status: enumOf(['validated']),
    validation_id: str,
    validated_payload: { ...anyValue, description: 'The payload as submitted' },
    layers: object({ schema: layerStatus, business_rules: layerStatus }),
  },
  {},
  'A valid payload: the run recorded for it and the verdict of each layer',
);

/** The same, an invalid payload (answered 422). */
const flowValidationFailed = object(
  {
    success: { type: 'boolean', enum: [false] },
    runId: uuid,
    shortId: str,
    status: enumOf(['validation_failed']),
    validation_id: str,
    error: object({
      code: enumOf(['VALIDATION_FAILED']),
      message: str,
      layer: { type: 'string', enum: ['schema', 'business_rules'], description: 'The layer that failed first' },
      details: { type: 'array', items: object({ field: { type: 'string', description: 'A path into the payload, `text` in freetext mode, or the rule id' }, message: str, code: enumOf(detailCodes) }) },
    }),
    layers: object({ schema: layerStatus, business_rules: layerStatus }),
  },
  {},
  'An invalid payload: the run recorded for it, what to fix, and the verdict of each layer',
);

const flowRunFields = {
  id: uuid,
  runId: uuid,
  shortId: str,
  gateId: uuid,
  status: str,
  source: { type: 'string', enum: ['rest', 'mcp'] },
  schemaVersion: { type: 'integer' },
  validation,
  metadata: anyValue,
  artefactUrl: nullable({ type: 'string', format: 'uri' }),
  approvalStatus: nullable(str),
  deliveryStatus: nullable(str),
  error: anyValue,
  errorCode: nullable({ type: 'string', description: 'The catalogued code of the failure (ERR_LIMIT_007, ERR_OUTBOUND_001, …); null without one' }),
  createdAt: time,
  updatedAt: time,
  completedAt: nullable(time),
};

const flowApproval = object(
  {
    id: uuid,
    runId: uuid,
    runShortId: str,
    runStatus: str,
    gateId: uuid,
    gateName: str,
    approverEmail: str,
    approverName: nullable(str),
    status: { type: 'string', enum: ['pending', 'approved', 'rejected', 'expired'] },
    comment: nullable({ type: 'string', description: 'The approver\'s comment with the decision' }),
    decidedAt: nullable(time),
    expiresAt: nullable({ ...time, description: 'The deadline: the end of the approval window (null once decided)' }),
    sentCount: { type: 'integer', description: 'How many e-mails with a link the approver was sent' },
    lastSentAt: nullable(time),
    createdAt: time,
  },
  {},
  'One approver of one run (api/flow/approvals.presenter.ts presentApproval)',
);

const flowRun = object({ ...flowRunFields, inputPayload: anyValue }, {}, 'A Flow run with its payload (api/flow/runs.presenter.ts presentRun)');
const flowRunSummary = object(flowRunFields, {}, 'A Flow run as listed: without its payload, `validation` only its verdict');

/** `{"set": true}`: a write-only secret is stored; its value is never answered (docs/flow.md "Write-only secrets"). */
const storedSecret = object({ set: { type: 'boolean', enum: [true] } }, {}, 'A write-only secret is stored (its value is never shown)');
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const orNull = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
const nonNegative = { type: 'integer', minimum: 0 };

/** One field of a gate's payload schema (domain/flow/gate.types.ts Property; docs/flow.md "ObjectSchema"). */
const gateProperty = object(
  { type: enumOf(['string', 'number', 'integer', 'boolean', 'array', 'object']) },
  {
    required: { type: 'boolean' },
    min: { type: 'number', description: 'number, integer: the smallest value; array: the fewest items' },
    max: { type: 'number', description: 'number, integer: the largest value; array: the most items' },
    minLength: { ...nonNegative, description: 'string: the fewest characters; array: the fewest items' },
    maxLength: { ...nonNegative, description: 'string: the most characters; array: the most items' },
    pattern: { type: 'string', description: 'string: an RE2 regular expression searched in the value' },
    enum: { type: 'array', items: { type: ['string', 'number', 'boolean', 'null'] } },
    format: enumOf(['email', 'url', 'date', 'date-time', 'uuid']),
    items: ref('GateProperty'),
    properties: { type: 'object', additionalProperties: ref('GateProperty') },
    additionalProperties: { type: 'boolean' },
    description: str,
  },
  'A field of a gate\'s payload schema: the keys that apply to its type',
);

const gateObjectSchema = object(
  { type: enumOf(['object']), properties: { type: 'object', additionalProperties: ref('GateProperty') } },
  { additionalProperties: { type: 'boolean', description: '`false` refuses fields not listed' } },
  'A gate\'s payload schema (docs/flow.md "ObjectSchema")',
);

const businessRule = object({ id: str, expression: { type: 'string', description: 'JSONata over the payload; passes only when it yields `true`' }, message: str }, { name: str }, 'A business rule of a gate');

const freetextConfig = object(
  {},
  { minLength: nonNegative, maxLength: nonNegative, requiredPatterns: { type: 'array', items: str }, forbiddenPatterns: { type: 'array', items: str } },
  'What a freetext gate checks in the text',
);

const gate = object(
  {
    id: uuid,
    shortId: str,
    slug: str,
    name: str,
    description: nullable(str),
    status: enumOf(['active', 'paused', 'archived']),
    validationMode: enumOf(['variables', 'freetext']),
    schema: orNull(ref('GateObjectSchema')),
    businessRules: { type: 'array', items: ref('BusinessRule') },
    freetextConfig: orNull(ref('FreetextConfig')),
    schemaVersion: { type: 'integer' },
    renderMode: enumOf(['none', 'native', 'custom_api']),
    renderTemplateId: nullable(str),
    renderConfig: orNull({ type: 'object', properties: { format: str, url: str, secret: ref('StoredSecret') }, additionalProperties: true, description: 'Free-form; `secret` is write-only' }),
    approvalMode: enumOf(['auto', 'manual']),
    approvalConfig: orNull(
      object(
        { approvers: { type: 'array', items: object({ email: str }, { name: str }) }, timeoutMinutes: { type: 'integer' }, onTimeout: enumOf(['reject', 'approve']) },
        { requiredApprovals: { type: 'integer', description: 'N of the M approvers (default 1)' } },
      ),
    ),
    deliveryChannels: {
      type: 'array',
      items: object({ type: enumOf(['webhook']), url: str, secret: ref('StoredSecret') }, { headers: { type: 'object', additionalProperties: ref('StoredSecret'), description: 'Header names; their values are write-only' } }),
    },
    maxSubmissionsPerMinute: nullable({ type: 'integer' }),
    notificationMode: enumOf(['immediate', 'digest']),
    notificationDigestMinutes: nullable({ type: 'integer' }),
    circuitBreakerEnabled: { type: 'boolean' },
    maxFailures: { type: 'integer' },
    cooldownSeconds: { type: 'integer' },
    circuit: object({ state: enumOf(['closed', 'open', 'half_open']), consecutiveFailures: { type: 'integer' }, openUntil: nullable(time) }),
    createdAt: time,
    updatedAt: time,
  },
  {},
  'A Flow gate; secrets read `{"set": true}` (api/flow/gates.presenter.ts)',
);

const gateSchemaVersion = object(
  {
    version: { type: 'integer' },
    validationMode: enumOf(['variables', 'freetext']),
    schema: orNull(ref('GateObjectSchema')),
    businessRules: { type: 'array', items: ref('BusinessRule') },
    freetextConfig: orNull(ref('FreetextConfig')),
    source: enumOf(['create', 'schema', 'import', 'settings']),
    sourceTemplateId: nullable(str),
    createdAt: time,
  },
  {},
  'A schema version of a gate, as written once (api/flow/gates.presenter.ts presentVersion)',
);


/** POST /api/flow/gates/:id/test (api/flow/runs.presenter.ts presentTestResult). */
const gateTestResult = object(
  {
    valid: { type: 'boolean' },
    durationMs: { type: 'number' },
    layers: object({ schema: layerStatus, business_rules: layerStatus }),
    failedLayer: { type: ['string', 'null'], enum: ['schema', 'business_rules', null], description: 'The layer that failed first; null when valid' },
    steps: {
      type: 'array',
      items: object(
        { name: str, status: enumOf(['pass', 'fail', 'error', 'skipped']), durationMs: { type: 'number' }, errors: { type: 'array', items: validationDetail } },
        { ruleId: str, expression: str },
      ),
    },
  },
  {},
  'A dry run: the verdict, each layer and each step (the schema or freetext layer, then every rule) with its errors',
);

const createdTemplate = object({ id: uuid, shortId: str, slug: str, name: str, outputFormats: { type: 'array', items: str }, createdAt: time }, {}, 'A template as created');

const templateSummaryFields = {
  id: uuid,
  shortId: str,
  slug: str,
  name: str,
  description: nullable(str),
  outputFormats: { type: 'array', items: str },
  folderId: nullable(str),
  isPublished: { type: 'boolean' },
  latestVersion: nullable({ type: 'integer' }),
  publishedAt: nullable(time),
  createdAt: time,
  updatedAt: time,
};

const templateSummary = object(templateSummaryFields, {}, 'A template as listed: without its definition');
/** The full template: the summary plus the draft's definition, whose fields depend on the template type. */
const template = { type: 'object', description: 'A template with its draft definition', required: Object.keys(templateSummaryFields), properties: templateSummaryFields, additionalProperties: true };

const asset = object(
  {
    id: uuid,
    kind: { type: 'string', enum: ['image', 'font'] },
    name: str,
    mediaType: { type: 'string', enum: ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml', 'font/ttf', 'font/otf', 'font/woff2'] },
    sizeBytes: { type: 'integer' },
    sha256: str,
    reference: { type: 'string', description: 'What a template writes to use it: `asset:<id>`' },
    width: nullable({ type: 'integer' }),
    height: nullable({ type: 'integer' }),
    fontFamily: nullable(str),
    fontWeight: nullable({ type: 'integer' }),
    fontStyle: nullable(str),
    createdBy: nullable(uuid),
    createdAt: time,
  },
  {},
  'An image or font templates use (api/assets/assets.presenter.ts), without its bytes',
);

const apiKeyFields = {
  id: uuid,
  teamId: uuid,
  name: str,
  keyType: str,
  keyPrefix: { type: 'string', description: 'The only part of the key shown after creation' },
  permissions: { type: 'object', additionalProperties: { type: 'boolean' } },
  isActive: { type: 'boolean' },
  inactiveReason: { type: ['string', 'null'], enum: [...API_KEY_INACTIVE_REASONS, null], description: 'Why the key does not work right now; null when it does' },
  expiresAt: nullable(time),
  lastUsedAt: nullable(time),
  createdAt: time,
  updatedAt: time,
};

const apiKey = object(apiKeyFields, {}, 'An API key (never its secret)');
const apiKeyStats = object(
  {
    totalRequests: { type: 'integer', description: 'Requests made with the key, ever' },
    requestsToday: { type: 'integer', description: 'Requests made with the key this UTC day' },
    documentsGenerated: { type: 'integer' },
    lastUsedAt: nullable(time),
  },
  {},
  'Usage of an API key, as last written (it trails live traffic by at most API_KEY_USAGE_FLUSH_MS)',
);
const revokedApiKey = object({ id: uuid, name: str, isActive: { type: 'boolean' }, updatedAt: time }, {}, 'An API key as revoked');

const oauthClientFields = {
  id: uuid,
  teamId: uuid,
  clientId: { type: 'string', description: '`fmoc_…`: the client_id of the token request' },
  name: str,
  secretPrefix: { type: 'string', description: 'The only part of the secret shown after creation or rotation' },
  permissions: { type: 'object', additionalProperties: { type: 'boolean' } },
  isActive: { type: 'boolean' },
  inactiveReason: { type: ['string', 'null'], enum: [...API_KEY_INACTIVE_REASONS, null], description: 'Why the client cannot get or use tokens now; null when it can' },
  secretRotatedAt: nullable(time),
  lastUsedAt: nullable({ type: 'string', format: 'date-time', description: 'When the client last obtained a token' }),
  createdAt: time,
  updatedAt: time,
};
const oauthClient = object(oauthClientFields, {}, 'An OAuth client (never its secret; docs/oauth.md)');
const oauthClientWithSecret = object({ ...oauthClientFields, clientSecret: { type: 'string', description: 'The secret (`fmocs_…`); only this answer shows it' } }, {}, 'An OAuth client as created or rotated, with its secret shown this once');

const role = { type: 'string', enum: ['owner', 'admin', 'member', 'viewer'] };
const invitableRole = { type: 'string', enum: ['admin', 'member', 'viewer'] };
const project = object(
  { id: uuid, name: str, slug: str, isPersonal: { type: 'boolean' }, role: { ...role, description: "The caller's role in it" }, memberCount: { type: 'integer' }, createdAt: time },
  {},
  'A project (team) as one member sees it (api/identity/teams.presenter.ts)',
);
const createdProject = object({ id: uuid, name: str, slug: str, createdAt: time }, {}, 'A project as created');
const member = object({ id: { ...uuid, description: "The member's user id" }, email: str, name: str, role, joinedAt: time }, {}, 'A member of a project');
const invitation = object(
  { id: uuid, email: str, role: invitableRole, status: { type: 'string', enum: ['pending', 'accepted', 'rejected', 'cancelled'] }, expiresAt: time },
  {},
  'An invitation into a project',
);
const myInvitation = object(
  { id: uuid, teamId: uuid, teamName: str, role: invitableRole, invitedBy: nullable({ type: 'string', description: "The inviter's name; null once that account is gone" }), expiresAt: time },
  {},
  'An invitation addressed to the signed-in user',
);
const invitationByLink = object(
  {
    id: uuid,
    teamId: uuid,
    teamName: str,
    role: invitableRole,
    email: { type: 'string', description: 'The invited address' },
    invitedBy: nullable({ type: 'string', description: "The inviter's name; null once that account is gone" }),
    expiresAt: time,
  },
  {},
  'The invitation behind an e-mailed link, shown to whoever holds the link',
);
const named = (fields: Record<string, JsonSchema>) => object(fields);
const activityEntry: JsonSchema = {
  type: 'object',
  description: 'An entry of the activity feed: who did what, when; the fields beyond `type`, `user` and `timestamp` depend on the type (docs/identity.md "Activity")',
  required: ['type', 'user', 'timestamp'],
  properties: {
    type: { type: 'string', description: '`project_created`, `member_joined`, `template_published`, …' },
    user: { oneOf: [named({ id: uuid, name: str, email: str }), { type: 'null' }], description: 'Who acted; null once that account is purged' },
    timestamp: time,
    project: { type: 'object', properties: { name: str, slug: str } },
    changes: { description: '`project_updated`: the new `{name?, slug?}`; `template_updated`: the names of the changed fields' },
    invitation: named({ id: uuid, email: str, role: str }),
    member: named({ id: uuid, name: str, email: str }),
    role: str,
    invitationId: uuid,
    from: str,
    to: str,
    version: { type: 'integer' },
    template: { type: 'object', properties: { id: str, name: str }, additionalProperties: true },
  },
  additionalProperties: true,
};

const createdApiKey = object({ ...apiKeyFields, plainKey: { type: 'string', description: 'The key (`fm_…`); only this answer shows it' } }, {}, 'An API key as created, with its secret shown this once');

const subscriptionFields = {
  id: uuid,
  teamId: uuid,
  url: { type: 'string', format: 'uri' },
  events: { type: 'array', items: str },
  description: nullable(str),
  isActive: { type: 'boolean' },
  createdAt: time,
  updatedAt: time,
};

const webhookSubscription = object(subscriptionFields, {}, 'A webhook subscription (never its secret)');
const createdWebhookSubscription = object({ ...subscriptionFields, secret: { type: 'string', description: 'The signing secret; only this answer shows it' } }, {}, 'A subscription as created, with its signing secret');

const deliveryAttempt = object(
  {
    number: { type: 'integer', description: 'Counts every attempt of the delivery, manual retries included' },
    at: { ...time, description: 'When the attempt started' },
    statusCode: nullable({ type: 'integer', description: 'The HTTP status answered; null when no answer came back' }),
    error: nullable({ type: 'string', description: 'Why it did not succeed; null on success' }),
    durationMs: { type: 'integer' },
  },
  {},
  'One attempt of a delivery',
);

const webhookDelivery = object(
  {
    id: uuid,
    subscriptionId: nullable(uuid),
    url: { type: 'string', format: 'uri' },
    eventId: str,
    eventType: str,
    status: { type: 'string', enum: ['pending', 'delivering', 'completed', 'failed'] },
    attempts: { type: 'array', items: deliveryAttempt },
    nextAttemptAt: nullable({ ...time, description: 'When the next automatic attempt is due, while one waits' }),
    payload: { ...open, description: 'The exact body sent on every attempt' },
    createdAt: time,
    completedAt: nullable(time),
  },
  {},
  'An event sent to a subscription, with every attempt (api/webhooks/webhooks.presenter.ts presentDelivery)',
);

const flowDelivery = object(
  {
    id: uuid,
    runId: uuid,
    url: { type: 'string', format: 'uri' },
    eventId: str,
    eventType: str,
    status: { type: 'string', enum: ['pending', 'delivering', 'completed', 'failed'] },
    attempts: { type: 'array', items: deliveryAttempt },
    nextAttemptAt: nullable({ ...time, description: 'When the next automatic attempt is due, while one waits' }),
    createdAt: time,
    completedAt: nullable(time),
  },
  { payload: { ...open, description: 'The exact body sent on every attempt; left out for an API key without `read_runs`' } },
  'A run\'s delivery to one of its gate\'s channels, with every attempt (docs/flow.md "Deliveries")',
);

const templateUsage = object(
  {
    templateId: uuid,
    templateName: nullable({ type: 'string', description: 'The template\'s name now; null when it no longer exists' }),
    total: { type: 'integer' },
    completed: { type: 'integer' },
    failed: { type: 'integer' },
    successRate: { type: 'number', description: 'Percentage of the ended ones that completed; 0 when none ended' },
  },
  {},
  'One template\'s documents over the period',
);

const count = { type: 'integer' };
const documentAnalytics = object(
  {
    totalDocuments: count,
    completedDocuments: count,
    failedDocuments: count,
    byFormat: { type: 'object', additionalProperties: count },
    byDate: {
      type: 'array',
      description: 'Per UTC day (`YYYY-MM-DD`) with documents; days without any are left out',
      items: object({ date: str, count, completed: count, failed: count }),
    },
    byTemplate: { type: 'array', description: 'Per template, most documents first', items: templateUsage },
    summary: object({ totalDocuments: count, successfulDocuments: count, failedDocuments: count, successRate: { type: 'number' } }),
    byStatus: { type: 'object', additionalProperties: count },
    period: object({ startDate: time, endDate: time }),
    successRate: { type: 'number', description: 'Percentage of the ended documents that completed, two decimals' },
    avgGenerationTimeMs: { type: 'integer' },
  },
  {},
  'Documents requested in the period (api/documents/analytics.service.ts), in both published forms',
);

const documentQuota = object(
  {
    month: { type: 'string', description: 'The calendar month (UTC), `YYYY-MM`' },
    resetsAt: { ...time, description: 'When the free quota starts again' },
    freeDocuments: object({ limit: count, used: count, remaining: count }, {}, 'This month\'s free (watermarked) documents; failed and cancelled ones are given back'),
    credits: object({ balance: count }, {}, 'Credits left: one per document without a watermark'),
  },
  {},
  'The project\'s free quota this month and its credits',
);

const reportRun = object(
  {
    id: uuid,
    shortId: str,
    reportId: uuid,
    reportVersion: { type: 'integer' },
    trigger: str,
    scheduleId: nullable(uuid),
    jobRunId: nullable(uuid),
    retryOf: nullable(uuid),
    scheduledFor: time,
    timezone: str,
    parameters: anyValue,
    formats: { type: 'array', items: str },
    status: str,
    failedStage: nullable(str),
    skipReason: nullable(str),
    datasets: { type: 'array', items: open },
    outputs: {
      type: 'array',
      items: object(
        { id: uuid, format: str, filename: str, bytes: { type: 'integer' }, downloadUrl: nullable({ type: 'string', format: 'uri' }), expiresAt: time },
        { dataset: str, pageCount: { type: 'integer' }, rowCount: { type: 'integer' } },
      ),
    },
    deliveryStatus: nullable(str),
    channelIds: { type: 'array', items: str },
    deliveries: { type: 'array' },
    documentsCharged: { type: 'integer' },
    error: anyValue,
    metadata: anyValue,
    createdAt: time,
    startedAt: nullable(time),
    completedAt: nullable(time),
  },
  {},
  'A report run with its datasets and outputs (api/reporting/runs.presenter.ts)',
);

const acceptedRun = object({ runId: uuid, shortId: str, status: str, statusUrl: { type: 'string', format: 'uri', description: 'The run\'s absolute status URL, also in `Location`' } }, {}, 'A report run, queued; follow `statusUrl`');

/** `components.schemas` entries; operations reference them with `resource('Name')`. */
export const RESOURCE_SCHEMAS: Record<string, JsonSchema> = {
  DocumentJob: documentJob,
  DocumentJobList: documentJobList,
  DocumentBatch: documentBatch,
  AcceptedDocumentBatch: acceptedBatch,
  FlowRun: flowRun,
  FlowRunSummary: flowRunSummary,
  FlowValidated: flowValidated,
  FlowValidationFailed: flowValidationFailed,
  FlowApproval: flowApproval,
  FlowDelivery: flowDelivery,
  Gate: gate,
  GateProperty: gateProperty,
  GateObjectSchema: gateObjectSchema,
  BusinessRule: businessRule,
  FreetextConfig: freetextConfig,
  StoredSecret: storedSecret,
  GateSchemaVersion: gateSchemaVersion,
  GateTestResult: gateTestResult,
  Template: template,
  TemplateSummary: templateSummary,
  CreatedTemplate: createdTemplate,
  Asset: asset,
  ApiKey: apiKey,
  CreatedApiKey: createdApiKey,
  ApiKeyStats: apiKeyStats,
  RevokedApiKey: revokedApiKey,
  OAuthClient: oauthClient,
  OAuthClientWithSecret: oauthClientWithSecret,
  Project: project,
  CreatedProject: createdProject,
  Member: member,
  Invitation: invitation,
  MyInvitation: myInvitation,
  InvitationByLink: invitationByLink,
  ActivityEntry: activityEntry,
  WebhookSubscription: webhookSubscription,
  CreatedWebhookSubscription: createdWebhookSubscription,
  WebhookDelivery: webhookDelivery,
  DocumentAnalytics: documentAnalytics,
  DocumentQuota: documentQuota,
  ReportRun: reportRun,
  AcceptedRun: acceptedRun,
  ...REPORTING_SOURCE_SCHEMAS,
  ...REPORTING_RESOURCE_SCHEMAS,
};

export type ResourceName = keyof typeof RESOURCE_SCHEMAS;

/** A reference to a resource schema, for an operation's answer or a page's items. */
export const resource = (name: ResourceName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
