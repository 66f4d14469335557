import { compileObjectSchema } from '../../../domain/flow/compile-schema';
import { definitionProblems } from '../../../domain/flow/definition-check';
import type { ObjectSchema as DomainSchema } from '../../../domain/flow/gate.types';
import { emptySchema, enumValue, fieldPaths, moved, parseSchema, PROPERTY_TYPES, renamed, retype, samplePayload, withKey, type GateProperty, type ObjectSchema } from '../../../web/src/pages/flow/gates/model';
import { changedFields, settingsBody, settingsOf } from '../../../web/src/pages/flow/gates/settings';

/**
 * The gate editor's plain data (web/src/pages/flow/gates/model.ts, settings.ts): what the schema
 * builder makes is what the API's definition check accepts, its sample payload passes the schema,
 * and the settings form sends write-only secrets back as `{"set": true}` unless a new one is typed.
 */
const check = (schema: ObjectSchema) => definitionProblems({ validationMode: 'variables', schema: schema as DomainSchema, businessRules: [], freetextConfig: null });

describe('the schema builder model', () => {
  const loaded: GateProperty = { type: 'string', required: true, description: 'd', minLength: 1, maxLength: 9, pattern: '^[0-9]+$', format: 'email', enum: ['1', '2', 'x'] };

  it('changes a type keeping what applies, dropping what does not, so the API accepts every result', () => {
    expect(retype(loaded, 'integer')).toEqual({ type: 'integer', required: true, description: 'd', enum: [1, 2] });
    expect(retype(loaded, 'boolean')).toEqual({ type: 'boolean', required: true, description: 'd' });
    expect(retype(loaded, 'array')).toEqual({ type: 'array', required: true, description: 'd', minLength: 1, maxLength: 9, items: { type: 'string' } });
    expect(retype({ type: 'array', min: 2, items: { type: 'number' } }, 'object')).toEqual({ type: 'object', properties: {} });
    for (const from of PROPERTY_TYPES) {
      for (const to of PROPERTY_TYPES) {
        const start = retype(loaded, from);
        const schema = { type: 'object' as const, properties: { f: retype(start, to) } };
        expect({ from, to, problems: check(schema) }).toEqual({ from, to, problems: [] });
      }
    }
  });

  it('reads values typed into allowed values by the type, and clears emptied keys', () => {
    expect([enumValue('number', '1.5'), enumValue('integer', '1.5'), enumValue('integer', 'x'), enumValue('boolean', 'true'), enumValue('string', ' a ')]).toEqual([1.5, undefined, undefined, true, ' a ']);
    expect(withKey({ type: 'string', pattern: 'a' }, 'pattern', '')).toEqual({ type: 'string' });
    expect(withKey({ type: 'string', required: true }, 'required', false)).toEqual({ type: 'string' });
    expect(withKey({ type: 'number' }, 'min', 0)).toEqual({ type: 'number', min: 0 });
  });

  it('renames and moves fields in place, and takes JSON only when it is an object schema', () => {
    const props = { a: { type: 'string' }, b: { type: 'number' }, c: { type: 'boolean' } } as Record<string, GateProperty>;
    expect(Object.keys(renamed(props, 'b', 'total'))).toEqual(['a', 'total', 'c']);
    expect(Object.keys(moved(props, 2, -1))).toEqual(['a', 'c', 'b']);
    expect(moved(props, 0, -1)).toBe(props);
    expect(parseSchema('{"type": "object", "properties": {}}').schema).toEqual(emptySchema());
    expect(parseSchema('{"type": "object"').error).toMatch(/Not valid JSON/);
    expect(parseSchema('{"type": "array", "properties": {}}').error).toMatch(/"type": "object"/);
  });

  it('offers field paths to rules and starts the console with a payload the schema accepts', () => {
    const schema: ObjectSchema = {
      type: 'object',
      additionalProperties: false,
      properties: {
        customer: { type: 'string', required: true, minLength: 12 },
        email: { type: 'string', format: 'email' },
        currency: { type: 'string', enum: ['EUR', 'USD'] },
        total: { type: 'number', min: 5 },
        address: { type: 'object', properties: { city: { type: 'string', required: true } } },
        items: { type: 'array', min: 1, items: { type: 'object', properties: { price: { type: 'integer', required: true, min: 0 } } } },
        when: { type: 'string', format: 'date-time' },
      },
    };
    expect(check(schema)).toEqual([]);
    expect(fieldPaths(schema)).toEqual(['customer', 'email', 'currency', 'total', 'address', 'address.city', 'items', 'items.price', 'when']);
    expect(compileObjectSchema(schema as DomainSchema)(samplePayload(schema))).toEqual([]);
  });
});

describe('the settings form', () => {
  const stored = {
    id: '00000000-0000-4000-8000-000000000001',
    shortId: 'fgate_x',
    slug: 'x',
    name: 'X',
    description: null,
    status: 'active' as const,
    validationMode: 'variables' as const,
    schema: null,
    businessRules: [],
    freetextConfig: null,
    schemaVersion: 1,
    renderMode: 'custom_api' as const,
    renderTemplateId: null,
    renderConfig: { url: 'https://r.example', secret: { set: true as const } },
    approvalMode: 'auto' as const,
    approvalConfig: null,
    deliveryChannels: [{ type: 'webhook' as const, url: 'https://d.example', secret: { set: true as const }, headers: { 'X-Key': { set: true as const } } }],
    maxSubmissionsPerMinute: null,
    notificationMode: 'digest' as const,
    notificationDigestMinutes: 5,
    circuitBreakerEnabled: true,
    maxFailures: 5,
    cooldownSeconds: 300,
    circuit: { state: 'closed' as const, consecutiveFailures: 0, openUntil: null },
    createdAt: '2026-11-29T00:00:00.000Z',
    updatedAt: '2026-11-29T00:00:00.000Z',
  };

  it('sends stored secrets back as {"set": true}, a typed one as itself, and only what changed', () => {
    const form = settingsOf(stored);
    const body = settingsBody(form);
    expect(body.renderConfig).toEqual({ url: 'https://r.example', secret: { set: true } });
    expect(body.deliveryChannels).toEqual([{ type: 'webhook', url: 'https://d.example', secret: { set: true }, headers: { 'X-Key': { set: true } } }]);
    expect(changedFields(body, body)).toEqual({});
    const edited = settingsBody({ ...form, removeRenderSecret: true, channels: [{ ...form.channels[0], secret: 'new-secret-1', headers: [{ name: 'X-Key', value: 'v2', stored: true }] }, { url: 'https://e.example', secret: 'other-secret', headers: [] }] });
    expect(changedFields(body, edited)).toEqual({
      renderConfig: { url: 'https://r.example', secret: null },
      deliveryChannels: [
        { type: 'webhook', url: 'https://d.example', secret: 'new-secret-1', headers: { 'X-Key': 'v2' } },
        { type: 'webhook', url: 'https://e.example', secret: 'other-secret', headers: {} },
      ],
    });
  });

  it('sends approval settings only for manual approval, without empty names', () => {
    const form = { ...settingsOf(stored), approvalMode: 'manual' as const, approvers: [{ email: ' ada@example.com ', name: '' }, { email: 'bob@example.com', name: 'Bob' }], requiredApprovals: 2, timeoutMinutes: 60, onTimeout: 'approve' as const };
    expect(settingsBody(form).approvalConfig).toEqual({ approvers: [{ email: 'ada@example.com' }, { email: 'bob@example.com', name: 'Bob' }], requiredApprovals: 2, timeoutMinutes: 60, onTimeout: 'approve' });
    expect(settingsBody({ ...form, approvalMode: 'auto' }).approvalConfig).toBeNull();
  });
});
