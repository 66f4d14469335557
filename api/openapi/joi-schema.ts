import type Joi from 'joi';
import JoiOpenApiParser from 'joi-to-json/lib/parsers/open-api-3.1';

type Schema = Record<string, unknown>;
type Rule = { name: string; args?: { limit?: number } };
type Spec = Record<string, unknown> & { rules?: Rule[]; allow?: unknown[]; patterns?: Array<{ schema?: Spec; regex?: string; rule?: Spec }> };

/**
 * joi-to-json's OpenAPI 3.1 parser with what it leaves out or gets wrong for the schemas the routes
 * use, each found by tests/unit/openapi/schema-conversion.test.ts (Joi and ajv disagreeing):
 * - Joi refuses `''` for a string unless `.allow('')`: such strings get `minLength: 1`;
 * - an object's `.min(n)`/`.max(n)` (at least one field in a PATCH) become `minProperties`/`maxProperties`;
 * - `.pattern(regex, …)` keys are also written as a property named `/regex/`: dropped, the
 *   `patternProperties` entry stays;
 * - `.allow(null)` on alternatives becomes `type: 'null'` beside `anyOf` (nothing but null would
 *   pass): null is added as another branch instead;
 * - `.pattern(Joi.string()…, value)` (keys given by a schema, not a regex) is left out, so the object
 *   took no key at all (`additionalProperties: false`): its keys become `propertyNames` and its values
 *   `additionalProperties` (found by tests/unit/docs-examples.test.ts: a datasource's `secrets`);
 * - `Joi.object()` with no keys declared takes any key, but was written as taking none
 *   (`additionalProperties: false`: a preview's `variables`, found by docs-examples on docs/templates.md).
 */
class Parser extends JoiOpenApiParser {
  protected override _setStringFieldProperties(fieldSchema: Schema, fieldDefn: Spec): void {
    super._setStringFieldProperties(fieldSchema, fieldDefn);
    if (fieldSchema.type !== 'string' || fieldSchema.enum !== undefined) return;
    const hasMin = (fieldDefn.rules ?? []).some((r) => r.name === 'min' || r.name === 'length');
    if (!hasMin && !(fieldDefn.allow ?? []).includes('')) fieldSchema.minLength = 1;
  }

  protected override _setObjectProperties(schema: Schema, joiSpec: Spec, definitions: Record<string, unknown>, level: number): void {
    super._setObjectProperties(schema, joiSpec, definitions, level);
    if (schema.type !== 'object') return;
    for (const rule of joiSpec.rules ?? []) {
      if (rule.name === 'min' && typeof rule.args?.limit === 'number') schema.minProperties = rule.args.limit;
      if (rule.name === 'max' && typeof rule.args?.limit === 'number') schema.maxProperties = rule.args.limit;
    }
    const properties = schema.properties as Schema | undefined;
    for (const pattern of Object.keys((schema.patternProperties as Schema | undefined) ?? {})) delete properties?.[`/${pattern}/`];
    // Joi.object() without keys takes any key (Joi's rule); the parser wrote it as taking none.
    if (joiSpec.keys === undefined && !joiSpec.patterns && (joiSpec.flags as { unknown?: boolean } | undefined)?.unknown !== false) {
      delete schema.properties;
      schema.additionalProperties = true;
    }
    const keyed = (joiSpec.patterns ?? []).find((p) => p.schema && p.rule && p.regex === undefined);
    if (keyed && schema.additionalProperties !== true) {
      schema.propertyNames = this.parse(keyed.schema!, definitions, level + 1);
      schema.additionalProperties = this.parse(keyed.rule!, definitions, level + 1);
    }
  }

  protected override _addNullTypeIfNullable(fieldSchema: Schema, fieldDefn: Spec): void {
    const branches = (fieldSchema.anyOf ?? fieldSchema.oneOf) as Schema[] | undefined;
    if (branches && fieldSchema.type === undefined && (fieldDefn.allow ?? []).includes(null)) {
      branches.push({ type: 'null' });
      return;
    }
    super._addNullTypeIfNullable(fieldSchema, fieldDefn);
  }
}

/** JSON Schema (OpenAPI 3.1 dialect) of a Joi schema. */
export function joiToJsonSchema(schema: Joi.Schema): Schema {
  return new Parser().parse(schema.describe());
}
