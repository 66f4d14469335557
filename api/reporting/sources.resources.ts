import type { JsonSchema } from '../openapi/operation';

/**
 * JSON Schemas of the answers about reporting's sources: datasources and their tests, health and
 * discovered schema (api/reporting/datasources.presenter.ts, datasources.service.ts), query objects,
 * their versions, checks and previews (api/reporting/queries.presenter.ts, queries.service.ts) and
 * agents (api/agents/agents.presenter.ts). Components of the document (api/openapi/resources.ts);
 * tests/integration/openapi/reporting-sources-responses.test.ts validates real answers against them.
 * Objects list every field; per-kind configurations, parameter values and rows stay open.
 */

const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const uuid = { type: 'string', format: 'uuid' };
const time = { type: 'string', format: 'date-time' };
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
const open = { type: 'object', additionalProperties: true };
const anyValue = {};

function object(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}, description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), required: Object.keys(required), properties: { ...required, ...optional }, additionalProperties: false };
}

const problem: JsonSchema = { type: 'object', required: ['code', 'message'], properties: { code: str, message: str }, additionalProperties: true };

const lastTest: JsonSchema = {
  type: 'object',
  description: 'The last connection test',
  required: ['at', 'ok'],
  properties: { at: time, ok: bool, latencyMs: nullable(int), serverVersion: nullable(str), error: { anyOf: [problem, { type: 'null' }] } },
  additionalProperties: true,
};

const datasource = object(
  {
    id: uuid,
    shortId: str,
    name: str,
    description: nullable(str),
    kind: { type: 'string', enum: ['postgres', 'mysql', 'sqlite', 'http_json', 'csv'] },
    connectionMode: { type: 'string', enum: ['direct', 'agent'] },
    agentId: nullable(uuid),
    config: { ...open, description: 'Per kind (docs/reporting.md "Datasources"); http_json `defaultHeaders` values as `{"set": true}`' },
    secrets: {
      type: 'object',
      description: 'Write-only: which secrets are set and when, never their values',
      additionalProperties: object({ set: { type: 'boolean', enum: [true] }, updatedAt: time }),
    },
    secretMode: { type: 'string', enum: ['stored', 'sealed', 'agent_local'] },
    pool: object({ max: int, idleTimeoutSeconds: int }),
    defaults: object({ timeoutSeconds: int, maxRows: int }),
    lastTest: { anyOf: [lastTest, { type: 'null' }] },
    schemaRefreshedAt: nullable(time),
    createdAt: time,
    updatedAt: time,
  },
  {},
  'A reporting datasource (api/reporting/datasources.presenter.ts); secrets never shown',
);

const datasourceTest = object(
  { ok: bool, latencyMs: nullable(int), serverVersion: nullable(str), executedBy: { type: 'string', enum: ['server', 'agent'] }, at: time },
  { error: problem },
  'The outcome of a connection test (200 whether it connected or not)',
);

const datasourceHealth = object(
  {
    status: { type: 'string', enum: ['ok', 'failing', 'unknown', 'offline'] },
    pool: object({ size: int, max: int, idle: int, waiting: int }),
    lastTest: { anyOf: [lastTest, { type: 'null' }] },
    lastError: { anyOf: [object({ code: str, message: str }, { at: nullable(str) }), { type: 'null' }] },
    reportedAt: nullable(str),
    executedBy: { type: 'string', enum: ['server', 'agent'] },
  },
  {},
  'The recent health of a datasource',
);

const discoveredSchema = object(
  {
    refreshedAt: time,
    tables: {
      type: 'array',
      items: object({
        schema: str,
        name: str,
        type: { type: 'string', enum: ['table', 'view'] },
        columns: { type: 'array', items: object({ name: str, dataType: str, nullable: bool, ordinal: int }) },
      }),
    },
    truncated: { ...bool, description: 'More than 2,000 tables or 50,000 columns: the list was cut there' },
  },
  {},
  'The tables and columns discovered in a datasource',
);

const pendingTask = object({ taskId: str, status: str }, {}, 'A request to a datasource behind an agent that did not answer within `wait`: read the task later');

const parameterDef = object(
  { name: str, type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean', 'date', 'datetime'] } },
  { label: str, required: bool, default: anyValue, multiple: bool, options: { type: 'array' } },
  'A parameter of a query (`{{ name }}` in its text)',
);

const queryFields = {
  id: uuid,
  shortId: str,
  slug: str,
  name: str,
  description: nullable(str),
  folderId: nullable(str),
  datasourceId: uuid,
  language: { type: 'string', enum: ['sql', 'http', 'table'] },
  parameters: { type: 'array', items: parameterDef },
  expectedColumns: { anyOf: [{ type: 'array', items: object({ name: str }, { type: str }) }, { type: 'null' }] },
  maxRows: int,
  timeoutSeconds: int,
  onRowLimit: { type: 'string', enum: ['fail', 'truncate'] },
  isPublished: bool,
  latestVersion: { ...int, description: '0 until the first publish' },
  publishedAt: nullable(time),
  createdAt: time,
  updatedAt: time,
};
const queryText = { text: str, request: { anyOf: [open, { type: 'null' }] }, transform: nullable(str) };

const query = object({ ...queryFields, ...queryText }, {}, 'A query object with its draft (api/reporting/queries.presenter.ts)');
const querySummary = object(queryFields, {}, 'A query object as lists show it: without its text, request and transform');

const versionFields = { id: uuid, version: int, releaseNotes: nullable(str), publishedAt: nullable(time), publishedBy: { ...nullable(str), description: "The publisher's name; null once their account is gone" } };
const queryVersion = object(versionFields, {}, 'A published version of a query');
const queryVersionDetail = object(
  { ...versionFields, queryId: uuid, datasourceId: uuid, definition: { ...open, description: '{language, text, parameters, expectedColumns, maxRows, timeoutSeconds, onRowLimit} as published' } },
  {},
  'A published version of a query with its frozen definition',
);
const publishedQuery = object({ id: uuid, queryId: uuid, version: int, publishedAt: nullable(time) }, {}, 'The version just published');

const queryProblem = object({ path: str, code: str, message: str }, {}, 'A problem of the query, where it is');
const queryCheck = object(
  {
    valid: bool,
    errors: { type: 'array', items: queryProblem },
    warnings: { type: 'array', items: queryProblem, description: 'Likely mistakes that do not stop a save (`UNUSED_PARAMETER`)' },
    placeholders: { type: 'array', items: str, description: 'The `{{ name }}` placeholders of the text or request, each once, in order' },
    compiled: {
      anyOf: [object({ text: str, values: { type: 'array', items: {}, description: 'The bound values in marker order (any JSON value)' } }, {}, 'The statement as it will be sent'), { type: 'null' }],
      description:
        "A valid SQL query's statement as a run without given values sends it: the dialect's bind markers (`$1`, `?`), optional clauses without a value dropped, `values` the parameters' defaults bound in order. null for http and table queries, a query with errors, or one that needs values to compile (a required parameter without default)",
    },
  },
  {},
  'The checks of a query, without saving it',
);

const queryPreview = object(
  {
    columns: { type: 'array', items: object({ name: str, type: str }) },
    rows: { type: 'array', items: open },
    rowCount: int,
    truncated: bool,
    durationMs: int,
    executedBy: { type: 'string', enum: ['server', 'agent'] },
  },
  {},
  'The first rows of a query run once on its draft',
);

const agentFields = {
  id: uuid,
  shortId: str,
  name: str,
  description: nullable(str),
  isActive: bool,
  tokenPrefix: str,
  publicKey: nullable(str),
  keyFingerprint: nullable(str),
  keyStatus: str,
  keyConfirmedAt: nullable(time),
  status: { type: 'string', enum: ['online', 'degraded', 'offline', 'never_connected'] },
  lastSeenAt: nullable(time),
  session: { anyOf: [open, { type: 'null' }] },
  load: { anyOf: [object({ running: int, capacity: int, queued: int }), { type: 'null' }] },
  pools: { type: 'array', items: open },
  datasourceCount: int,
  createdAt: time,
  updatedAt: time,
};
const agent = object(agentFields, {}, 'A reporting agent (api/agents/agents.presenter.ts); never its token');
const agentWithToken = object({ ...agentFields, token: { ...str, description: 'The agent token (`fmag_…`), shown in this answer only' } }, {}, 'An agent with its token, shown once');

const agentPool = object(
  { datasourceId: uuid, kind: nullable(str), size: int, max: int, idle: int, waiting: int, lastError: nullable(str), lastErrorAt: nullable(time), reportedAt: time },
  {},
  'A datasource connection pool as the agent\'s last heartbeat reported it',
);
const agentSession = object(
  { id: uuid, version: str, hostname: str, platform: str, startedAt: time, capabilities: { type: 'array', items: str }, maxConcurrency: int },
  {},
  'The latest session the agent opened',
);
const agentHealth = object(
  {
    status: agentFields.status,
    lastSeenAt: nullable(time),
    session: { anyOf: [agentSession, { type: 'null' }] },
    load: agentFields.load,
    pools: { type: 'array', items: agentPool },
    recentErrors: { type: 'array', description: 'The last 20 errors, oldest first', items: object({ at: time, taskId: nullable(str), code: str, message: str }) },
  },
  {},
  'An agent\'s liveness, session, load and pools (api/agents/agents.presenter.ts presentHealth)',
);

const agentTaskFields = {
  id: { ...str, description: '`atk_…`' },
  agentId: uuid,
  agentShortId: str,
  kind: { type: 'string', enum: ['query', 'test', 'schema', 'preview'] },
  datasourceId: uuid,
  runId: nullable(uuid),
  status: { type: 'string', enum: ['queued', 'leased', 'completed', 'failed', 'cancel_requested', 'cancelled', 'expired'] },
  attempt: int,
  leasedAt: nullable(time),
  leaseExpiresAt: nullable(time),
  completedAt: nullable(time),
  error: { anyOf: [open, { type: 'null' }] },
  createdAt: time,
};
const agentTask = object(agentTaskFields, {}, 'A task of an agent (api/agents/agents.presenter.ts presentTask): never the statement\'s values or secrets');
const agentTaskWithOutcome = object(
  agentTaskFields,
  { result: { ...anyValue, description: 'Once the task has ended: what the request that made it would have answered (a test\'s outcome, a schema, preview rows), or `{error}`' } },
  'A task of an agent, with its outcome once it has ended',
);

const openedSession = object(
  {
    agentId: { ...str, description: 'The agent\'s short id (`agt_…`)' },
    keyStatus: { type: 'string', enum: ['none', 'pending', 'confirmed'] },
    keyFingerprint: nullable(str),
    projectId: uuid,
    sessionId: uuid,
    pollWaitSeconds: int,
    heartbeatIntervalSeconds: int,
    leaseSeconds: int,
    maxResultBytes: int,
  },
  {},
  'A session, opened: its id and the intervals the agent keeps to',
);
const leasedTask = object(
  {
    taskId: str,
    kind: agentTaskFields.kind,
    attempt: int,
    leaseExpiresAt: nullable(time),
    datasource: object({
      id: uuid,
      kind: str,
      config: open,
      pool: open,
      secrets: object({ mode: { type: 'string', enum: ['agent_local', 'sealed', 'stored'] } }, { sealed: { ...str, description: 'The secrets sealed to the agent\'s confirmed key' }, values: { type: 'object', additionalProperties: str } }),
    }),
  },
  { statement: anyValue, limits: open },
  'A task leased to the session: the datasource to run it on and the compiled statement',
);
const heartbeatAnswer = object(
  {
    cancel: { type: 'array', items: str, description: 'Tasks to stop' },
    leaseExpiresAt: { type: 'object', additionalProperties: time, description: 'The renewed lease of each running task, by task id' },
    serverTime: time,
  },
  {},
  'What the agent is to do after a heartbeat',
);

export const REPORTING_SOURCE_SCHEMAS: Record<string, JsonSchema> = {
  Datasource: datasource,
  DatasourceTest: datasourceTest,
  DatasourceHealth: datasourceHealth,
  DiscoveredSchema: discoveredSchema,
  PendingAgentTask: pendingTask,
  Query: query,
  QuerySummary: querySummary,
  QueryVersion: queryVersion,
  QueryVersionDetail: queryVersionDetail,
  PublishedQuery: publishedQuery,
  QueryCheck: queryCheck,
  QueryPreview: queryPreview,
  Agent: agent,
  AgentWithToken: agentWithToken,
  AgentHealth: agentHealth,
  AgentTask: agentTask,
  AgentTaskWithOutcome: agentTaskWithOutcome,
  AgentSessionOpened: openedSession,
  LeasedAgentTask: leasedTask,
  AgentHeartbeatAnswer: heartbeatAnswer,
};
