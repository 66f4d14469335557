import Joi from 'joi';
import type { DatasourceKind } from '../../domain/reporting/query-runner';

/**
 * Datasource bodies (docs/reporting.md "Datasources"). The body's shape is
 * checked here (unknown fields: 400 ERR_VALID_001); `config` and `secrets` are checked per kind
 * by the service, which answers every problem at once (400 ERR_DS_002, `relatedInfo.errors`).
 */

export const KINDS: DatasourceKind[] = ['postgres', 'mysql', 'sqlite', 'http_json', 'csv'];

/** The settings' own bounds; the deployment's REPORTING_* maximums are checked by the service (limits.ts). */
const SYSTEM_MAX_TIMEOUT_SECONDS = 24 * 3600;
const SYSTEM_MAX_ROWS = 10_000_000;

const name = Joi.string().trim().min(1).max(100);
const description = Joi.string().trim().max(1000).allow('', null);
const pool = Joi.object({
  max: Joi.number().integer().min(1).max(20),
  idleTimeoutSeconds: Joi.number().integer().min(10).max(600),
});
const defaults = Joi.object({
  timeoutSeconds: Joi.number().integer().min(1).max(SYSTEM_MAX_TIMEOUT_SECONDS),
  maxRows: Joi.number().integer().min(1).max(SYSTEM_MAX_ROWS),
});
/** A secret value; `null` (PATCH) clears it. */
const secrets = Joi.object().pattern(Joi.string().max(50), Joi.string().max(10_000).allow(null));

export interface DatasourceFields {
  name: string;
  description?: string | null;
  connectionMode?: 'direct' | 'agent';
  agentId?: string | null;
  config: Record<string, unknown>;
  secrets?: Record<string, string | null>;
  secretMode?: 'stored' | 'sealed' | 'agent_local';
  pool?: { max?: number; idleTimeoutSeconds?: number };
  defaults?: { timeoutSeconds?: number; maxRows?: number };
}

export interface CreateDatasourceInput extends DatasourceFields {
  kind: DatasourceKind;
}

export type UpdateDatasourceInput = Partial<DatasourceFields>;

const fields = {
  name,
  description,
  connectionMode: Joi.string().valid('direct', 'agent').description('Changing it drops the stored secrets: give them again in the same request (400 ERR_DS_009)'),
  agentId: Joi.string().max(100).allow(null).description('Changing it drops the stored secrets: give them again in the same request (400 ERR_DS_009)'),
  config: Joi.object()
    .unknown(true)
    .description(
      'Per kind (docs/reporting.md "Datasources"). Changing a target field (postgres/mysql `host`, `port`, `ssl`, `caCert`, `allowCleartextPassword`; http_json `baseUrl`) drops the stored secrets and http_json `defaultHeaders` values: give them again in the same request (400 ERR_DS_009 names the missing ones). `allowCleartextPassword` (default false): send the password itself to a server that asks for it without verify-full TLS. http_json `defaultHeaders` values are write-only (`{"set": true}`)',
    ),
  secrets: secrets.description('Write-only: answers show `{"<name>": {"set": true, "updatedAt": "…"}}`; a string sets, null clears, left out keeps (but see `config`: a target change needs them again)'),
  secretMode: Joi.string()
    .valid('stored', 'sealed', 'agent_local')
    .description('Agent datasources: `sealed` by default once the agent has a public key, which then refuses `stored` (400 ERR_DS_010); `stored` before'),
  pool,
  defaults,
};

export const createDatasourceSchema = Joi.object<CreateDatasourceInput, true>({
  ...fields,
  name: name.required(),
  kind: Joi.string().valid(...KINDS).required(),
  config: fields.config.required(),
});

export const updateDatasourceSchema = Joi.object<UpdateDatasourceInput, true>(fields).min(1);

export interface ListDatasourcesQuery {
  page: number;
  limit: number;
  kind?: DatasourceKind;
  agentId?: string;
  search?: string;
}

export const listDatasourcesSchema = Joi.object<ListDatasourcesQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  kind: Joi.string().valid(...KINDS),
  agentId: Joi.string().max(100),
  search: Joi.string().trim().max(100).allow(''),
});

/** `wait`: how long a request about a datasource behind an agent waits for the agent (then 202 with the task id); a direct one answers when it is done. */
export interface TestDatasourceInput {
  wait?: number;
}

export const testDatasourceSchema = Joi.object<TestDatasourceInput, true>({ wait: Joi.number().integer().min(1).max(55) });

export interface SchemaQuery {
  search?: string;
}

export const schemaQuerySchema = Joi.object<SchemaQuery, true>({ search: Joi.string().trim().max(200).allow('') });

/** An environment variable name on the agent's host (secretMode `agent_local`). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * `config` of a SQL datasource (postgres, mysql). TLS checks the certificate unless `ssl` says
 * otherwise. With secretMode `agent_local`, `secretEnv` names the variable holding the password on the
 * agent's host (and only then).
 */
export function sqlConfigSchema(kind: 'postgres' | 'mysql', agentLocal = false) {
  return Joi.object({
    host: Joi.string().trim().hostname().required(),
    port: Joi.number().integer().min(1).max(65535).default(kind === 'postgres' ? 5432 : 3306),
    database: Joi.string().trim().min(1).max(200).required(),
    user: Joi.string().trim().min(1).max(200).required(),
    ssl: Joi.string().valid('disable', 'require', 'verify-full').default('verify-full'),
    caCert: Joi.string().max(20_000),
    // Send the password itself to a server that asks for it without verify-full TLS (cleartext authentication); off when left out.
    allowCleartextPassword: Joi.boolean(),
    ...(kind === 'postgres' ? { schemas: Joi.array().items(Joi.string().trim().min(1).max(200)).max(100) } : {}),
    secretEnv: agentLocal ? Joi.string().pattern(ENV_NAME, 'an environment variable name').required() : Joi.forbidden(),
  });
}

/** `config` of a sqlite datasource: an absolute path of an existing file on the agent's host (opened read-only there). */
export const sqliteConfigSchema = Joi.object({
  path: Joi.string()
    .max(1000)
    .pattern(/^(\/|[A-Za-z]:[\\/])[^\0]*$/, 'an absolute path')
    .required(),
});

export const sqlSecretsSchema = Joi.object({ password: Joi.string().max(10_000).allow(null) });

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const headerValue = Joi.string().max(2000).pattern(/^[^\r\n\0]*$/, 'a header value without line breaks');
/** A write-only value given back as answers show it: keeps the stored value (docs/reporting.md "http_json"). */
const storedValue = Joi.object({ set: Joi.boolean().valid(true).required() }).description('`{"set": true}`: keep the stored value');

/**
 * `config` of an http_json datasource: the API's base URL (http or https, no query, fragment or
 * user info), how requests authenticate (the secret is `password`, `token` or `headerValue`), the
 * path the connection test GETs and headers sent with every request.
 */
export const httpJsonConfigSchema = Joi.object({
  baseUrl: Joi.string()
    .trim()
    .max(2000)
    .uri({ scheme: ['http', 'https'] })
    .custom((value: string, helpers) => {
      const url = new URL(value);
      if (url.search || url.hash || url.username || url.password) return helpers.message({ custom: "'baseUrl' may not hold a query, a fragment or credentials" });
      return value;
    })
    .required(),
  auth: Joi.string().valid('none', 'basic', 'bearer', 'header').default('none'),
  username: Joi.string().max(200).when('auth', { is: 'basic', then: Joi.required(), otherwise: Joi.forbidden() }),
  headerName: Joi.string()
    .pattern(HEADER_NAME, 'a header name')
    .invalid('host', 'Host', 'content-length', 'transfer-encoding', 'connection')
    .when('auth', { is: 'header', then: Joi.required(), otherwise: Joi.forbidden() }),
  healthPath: Joi.string().max(2000).pattern(/^\/[^?#\s]*$/, 'a path starting with /').default('/'),
  /** Write-only values (encrypted at rest, answered `{"set": true}`); `{"set": true}` keeps a stored value, left out keeps them all. */
  defaultHeaders: Joi.object()
    .pattern(Joi.string().pattern(HEADER_NAME, 'a header name'), Joi.alternatives(headerValue, storedValue))
    .max(50)
    .description('Headers sent with every request. Values are write-only: answers show `{"set": true}` per header name; send `{"set": true}` (or leave `defaultHeaders` out) to keep a stored value. Changing `baseUrl` drops them: give them again in the same request (400 ERR_DS_009)'),
});

/** `config` of a csv datasource: an uploaded file (PUT …/file) or a file at `url`, read with these settings. */
export const csvConfigSchema = Joi.object({
  source: Joi.string().valid('upload', 'url').default('upload'),
  url: Joi.string()
    .trim()
    .max(2000)
    .uri({ scheme: ['http', 'https'] })
    .when('source', { is: 'url', then: Joi.required(), otherwise: Joi.forbidden() }),
  delimiter: Joi.string().valid(',', ';', '\t', '|').default(','),
  encoding: Joi.string().valid('utf-8', 'latin1', 'utf-16le').default('utf-8'),
  header: Joi.boolean().default(true),
});

/** A csv datasource holds no secret. */
export const noSecretsSchema = Joi.object<Record<never, never>, true>({});

export const httpJsonSecretsSchema = Joi.object({
  password: Joi.string().max(10_000).allow(null),
  token: Joi.string().max(10_000).pattern(/^[^\r\n\0]*$/, 'a value without line breaks').allow(null),
  headerValue: Joi.string().max(10_000).pattern(/^[^\r\n\0]*$/, 'a value without line breaks').allow(null),
});
