import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type Joi from 'joi';
import { operationId, toJsonSchema } from '../../../api/openapi/document';
import type { JsonSchema, Operation } from '../../../api/openapi/operation';
import { allOperations } from '../../../api/openapi/operations';

/**
 * The JSON Schemas of the OpenAPI document are right: for every Joi body and query an operation
 * names, sample inputs get the same verdict from Joi (as the routes validate: convert on, unknown
 * fields refused) and from the generated JSON Schema under ajv. Samples: ones written here for the
 * main operations, plus edge cases generated from each schema (a minimal and a full valid input,
 * then each required field left out, an unknown field, a wrong type, a value outside an enum,
 * a string or number just past its bounds).
 */
type Sample = { name: string; value: unknown };
type Target = { op: Operation; part: 'body' | 'query'; joi: Joi.Schema };

const bodyAjv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
// Query strings arrive as strings; Joi converts them, so ajv coerces too.
const queryAjv = addFormats(new Ajv2020({ strict: false, allErrors: true, coerceTypes: true }));

const operations = allOperations({ batchMaxDocuments: 50 });
const targets: Target[] = operations.flatMap((op) => [
  ...(op.request?.body && (op.request.bodyType ?? 'json') === 'json' ? [{ op, part: 'body' as const, joi: op.request.body }] : []),
  ...(op.request?.query ? [{ op, part: 'query' as const, joi: op.request.query }] : []),
]);

const joiAccepts = (joi: Joi.Schema, value: unknown) => joi.validate(value, { abortEarly: true, convert: true, allowUnknown: false, stripUnknown: false }).error === undefined;

/** A value the schema accepts, or undefined when this generator cannot make one (a pattern, say). */
function validValue(schema: JsonSchema, full: boolean, query: boolean): unknown {
  const s = schema as Record<string, any>;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum.find((v: unknown) => v !== null);
  if (s.default !== undefined && !full) return s.default;
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(s[key])) {
      for (const branch of s[key]) {
        const v = validValue(branch, full, query);
        if (v !== undefined) return v;
      }
      return undefined;
    }
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'string': {
      if (s.pattern) return undefined;
      const byFormat: Record<string, string> = {
        email: 'ada@example.com',
        uuid: '3f1c2b7e-8a4d-4e2f-9b1a-2c3d4e5f6a7b',
        'date-time': '2031-05-04T10:00:00.000Z',
        date: '2031-05-04',
        uri: 'https://example.com/hook',
        hostname: 'example.com',
      };
      if (s.format) return byFormat[s.format];
      const len = Math.max(s.minLength ?? 1, Math.min(3, s.maxLength ?? 3));
      return 'abcdefghij'.repeat(Math.ceil(len / 10) + 1).slice(0, len);
    }
    case 'integer':
    case 'number': {
      const n = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      return query ? String(n) : n;
    }
    case 'boolean':
      return query ? 'true' : true;
    case 'array': {
      const item = s.items ? validValue(s.items, full, query) : 'x';
      if (item === undefined) return undefined;
      const n = s.minItems ?? (full ? 1 : 0);
      if (s.uniqueItems && n > 1) return undefined;
      return Array.from({ length: n }, () => item);
    }
    case 'object':
    case undefined: {
      if (type === undefined && !s.properties) return undefined;
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries<JsonSchema>(s.properties ?? {})) {
        if (!full && !(s.required ?? []).includes(name)) continue;
        const v = validValue(prop, full, query);
        if (v === undefined) {
          if ((s.required ?? []).includes(name)) return undefined;
          continue;
        }
        out[name] = v;
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** Inputs around the edges of an object schema, each with its own name. */
function edgeCases(schema: JsonSchema, query: boolean): Sample[] {
  const s = schema as Record<string, any>;
  const samples: Sample[] = [];
  const minimal = validValue(schema, false, query);
  const full = validValue(schema, true, query);
  if (minimal !== undefined) samples.push({ name: 'minimal valid', value: minimal });
  if (full !== undefined) samples.push({ name: 'full valid', value: full });
  const base = (full ?? minimal) as Record<string, unknown> | undefined;
  if (!base || typeof base !== 'object' || Array.isArray(base)) return samples;
  samples.push({ name: 'unknown field', value: { ...base, notAField: query ? 'x' : 1 } });
  for (const name of s.required ?? []) {
    const { [name]: _omitted, ...rest } = base;
    samples.push({ name: `without required ${name}`, value: rest });
  }
  for (const [name, prop] of Object.entries<Record<string, any>>(s.properties ?? {})) {
    const type = Array.isArray(prop.type) ? prop.type.find((t: string) => t !== 'null') : prop.type;
    const wrong = type === 'object' || type === 'array' ? (query ? undefined : true) : query ? undefined : { nested: true };
    if (wrong !== undefined) samples.push({ name: `${name} of the wrong type`, value: { ...base, [name]: wrong } });
    if (Array.isArray(prop.enum) && !prop.enum.includes('not-a-listed-value')) samples.push({ name: `${name} outside its enum`, value: { ...base, [name]: 'not-a-listed-value' } });
    if (type === 'string' && typeof prop.maxLength === 'number' && !prop.pattern && !prop.format && !prop.enum) {
      samples.push({ name: `${name} one past maxLength`, value: { ...base, [name]: 'x'.repeat(prop.maxLength + 1) } });
    }
    if (type === 'string' && !prop.enum && !prop.format && !prop.pattern) samples.push({ name: `${name} empty`, value: { ...base, [name]: '' } });
    if ((type === 'integer' || type === 'number') && typeof prop.maximum === 'number') {
      const v = prop.maximum + 1;
      samples.push({ name: `${name} one past maximum`, value: { ...base, [name]: query ? String(v) : v } });
    }
    if ((type === 'integer' || type === 'number') && typeof prop.minimum === 'number') {
      const v = prop.minimum - 1;
      samples.push({ name: `${name} one under minimum`, value: { ...base, [name]: query ? String(v) : v } });
    }
    if (type === 'integer') samples.push({ name: `${name} not whole`, value: { ...base, [name]: query ? '1.5' : 1.5 } });
  }
  return samples;
}

/** Samples written by hand for the operations most clients call first. */
const WRITTEN: Record<string, Sample[]> = {
  postReportingQueriesValidate: [
    { name: 'against a datasource', value: { datasourceId: 'ds_abc', text: 'SELECT {{ a }}', parameters: [{ name: 'a', type: 'string' }] } },
    { name: 'against a kind', value: { kind: 'mysql', text: 'SELECT 1' } },
    { name: 'neither', value: { text: 'SELECT 1' } },
    { name: 'both', value: { datasourceId: 'ds_abc', kind: 'mysql' } },
    { name: 'an unknown kind', value: { kind: 'oracle' } },
  ],
  postAuthSignup: [
    { name: 'a sign-up', value: { email: 'ada@example.com', password: 'a long passphrase 7', name: 'Ada' } },
    { name: 'no email', value: { password: 'a long passphrase 7', name: 'Ada' } },
    { name: 'not an email', value: { email: 'ada', password: 'a long passphrase 7', name: 'Ada' } },
  ],
  postAuthLogin: [
    { name: 'a login', value: { email: 'ada@example.com', password: 'secret' } },
    { name: 'password a number', value: { email: 'ada@example.com', password: 12345678 } },
  ],
  postApiKeys: [
    { name: 'a key with flags', value: { name: 'CI', permissions: { generate_documents: true, read_documents: true } } },
    { name: 'a flag as a string', value: { name: 'CI', permissions: { generate_documents: 'true' } } },
    { name: 'an unknown flag', value: { name: 'CI', permissions: { fly: true } } },
    { name: 'no name', value: { permissions: {} } },
  ],
  postFlowGatesByGateIdRuns: [
    { name: 'an object payload with metadata', value: { payload: { customer: 'Ada', amount: 42 }, metadata: { orderId: 'A-17', rush: true, note: null } } },
    { name: 'a text payload', value: { payload: 'free text' } },
    { name: 'no payload', value: { metadata: {} } },
    { name: 'nested metadata', value: { payload: {}, metadata: { nested: { a: 1 } } } },
  ],
  postDocumentsGenerate: [
    { name: 'data without a template', value: { data: { a: 1 } } },
  ],
  getFlowRuns: [
    { name: 'a page', value: { page: '2', limit: '50', status: 'passed', source: 'mcp' } },
    { name: 'limit over 100', value: { limit: '101' } },
    { name: 'an unknown source', value: { source: 'email' } },
  ],
  postTemplates: [
    { name: 'a template', value: { name: 'Invoice', outputFormats: ['pdf'], schema: { pages: [] } } },
    { name: 'no schema', value: { name: 'Invoice', outputFormats: ['pdf'] } },
    { name: 'formats not a list', value: { name: 'Invoice', outputFormats: 'pdf', schema: {} } },
  ],
  putFlowGatesById: [
    { name: 'a rename', value: { name: 'Orders' } },
    { name: 'nothing', value: {} },
    { name: 'manual approval', value: { approvalMode: 'manual', approvalConfig: { approvers: [{ email: 'rev@example.com' }], timeoutMinutes: 60, onTimeout: 'reject' } } },
    { name: 'no approvers', value: { approvalConfig: { approvers: [], timeoutMinutes: 60, onTimeout: 'reject' } } },
  ],
  postAgentsMeTasksByTaskIdFailure: [
    { name: 'a failure', value: { code: 'ERR_QRY_006', message: 'Access denied', retryable: false, dbCode: '1045' } },
    { name: 'a code with spaces', value: { code: 'ERR QRY', message: 'x', retryable: false } },
  ],
  postWebhooks: [{ name: 'no url', value: { events: ['document.generated'] } }],
  putTeamsByIdEmbedOrigins: [
    { name: 'two origins', value: { origins: ['https://app.example.com', 'http://localhost:8080'] } },
    { name: 'a path', value: { origins: ['https://app.example.com/'] } },
    { name: 'a wildcard', value: { origins: ['https://*.example.com'] } },
    { name: 'javascript:', value: { origins: ['javascript:alert(1)'] } },
  ],
  postTemplatesByIdEmbedTokens: [
    { name: 'an edit token for an hour', value: { mode: 'edit', ttlSeconds: 3600, origin: 'https://app.example.com' } },
    { name: 'too long', value: { mode: 'view', ttlSeconds: 86401 } },
  ],
};

/** The template routes are the same under three prefixes: their samples are written once. */
const writtenFor = (id: string) => WRITTEN[id.replace(/^(post)(TemplatesAttachment|V1Templates)$/, '$1Templates')] ?? [];

const cases = targets.flatMap(({ op, part, joi }) => {
  const json = toJsonSchema(joi);
  const id = operationId(op);
  const written = part === 'body' || id === 'getFlowRuns' ? writtenFor(id) : [];
  return [...written, ...edgeCases(json, part === 'query')].map((sample) => ({ id, part, joi, json, sample }));
});

test('there are Joi schemas to compare', () => {
  expect(targets.length).toBeGreaterThan(100);
  expect(cases.length).toBeGreaterThan(1000);
});

test('Joi and the generated JSON Schema give every sample the same verdict', () => {
  const disagreements: string[] = [];
  const validators = new Map<JsonSchema, ReturnType<typeof bodyAjv.compile>>();
  for (const { id, part, joi, json, sample } of cases) {
    const ajv = part === 'query' ? queryAjv : bodyAjv;
    let validate = validators.get(json);
    if (!validate) {
      validate = ajv.compile(json);
      validators.set(json, validate);
    }
    // ajv coerces in place: it gets its own copy.
    const byAjv = validate(structuredClone(sample.value));
    const byJoi = joiAccepts(joi, structuredClone(sample.value));
    if (byAjv !== byJoi) disagreements.push(`${id} ${part} "${sample.name}" ${JSON.stringify(sample.value)}: Joi ${byJoi ? 'accepts' : 'refuses'}, JSON Schema ${byAjv ? 'accepts' : 'refuses'}`);
  }
  expect(disagreements).toEqual([]);
});

test('every operation with a Joi schema gets a valid sample from the generator or a written one', () => {
  const withoutValid = targets
    .filter(({ op, part, joi }) => {
      const id = operationId(op);
      const samples = [...writtenFor(id), ...edgeCases(toJsonSchema(joi), part === 'query')];
      return !samples.some((s) => joiAccepts(joi, s.value));
    })
    .map(({ op, part }) => `${operationId(op)} ${part}`);
  expect(withoutValid).toEqual([]);
});

test('an object without declared keys takes any key, as Joi does (a preview\'s variables)', () => {
  const preview = operations.find((op) => op.method === 'post' && op.path === '/api/templates/:id/preview');
  const json = toJsonSchema(preview!.request!.body!);
  const body = { variables: { customer: 'Ada', lines: [{ qty: 2 }] } };
  expect(joiAccepts(preview!.request!.body!, body)).toBe(true);
  expect(bodyAjv.validate(json, body)).toBe(true);
  // Declared keys still close the object: an unknown field at the top is refused by both.
  expect(joiAccepts(preview!.request!.body!, { ...body, colour: 'red' })).toBe(false);
  expect(bodyAjv.validate(json, { ...body, colour: 'red' })).toBe(false);
});
