import { freetextToJsonSchema, gateSchemaToJsonSchema } from '../../../domain/flow/gate-json-schema';

describe('a gate definition as JSON Schema', () => {
  it('turns required flags into required lists and the engine bounds into JSON Schema keywords', () => {
    const out = gateSchemaToJsonSchema({
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', required: true, minLength: 2, maxLength: 40, pattern: '^[A-Z]', description: 'Who' },
        age: { type: 'integer', min: 0, max: 150 },
        kind: { type: 'string', enum: ['a', 'b'] },
        mail: { type: 'string', format: 'email' },
        tags: { type: 'array', min: 1, minLength: 2, max: 5, items: { type: 'string' } },
        address: { type: 'object', required: true, properties: { city: { type: 'string', required: true } } },
      },
    });
    expect(out).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      required: ['name', 'address'],
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 40, pattern: '^[A-Z]', description: 'Who' },
        age: { type: 'integer', minimum: 0, maximum: 150 },
        kind: { type: 'string', enum: ['a', 'b'] },
        mail: { type: 'string', format: 'email' },
        tags: { type: 'array', minItems: 2, maxItems: 5, items: { type: 'string' } },
        address: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
      },
    });
  });

  it('a gate without a schema takes any object; a freetext gate takes a string within its lengths', () => {
    expect(gateSchemaToJsonSchema(null)).toEqual({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: {} });
    expect(freetextToJsonSchema({ minLength: 3, requiredPatterns: ['x'] })).toEqual({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string', minLength: 3 });
  });
});
