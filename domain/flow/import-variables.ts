import { normalizeVariables } from '../templates/definition-shapes';
import type { TemplateVariable, VariableField, VariableType } from '../templates/template.types';
import type { ObjectSchema, Property } from './gate.types';

/**
 * import-schema (spec, Flow gates): a template's variables become a gate ObjectSchema, so a
 * gate can check a payload before it is rendered with that template. Template types without a
 * gate counterpart map to what their JSON form is: `date` and `image` are strings.
 */

function baseProperty(type: VariableType, description?: string): Property {
  const prop: Property = { type: 'string' };
  switch (type) {
    case 'number':
    case 'integer':
    case 'boolean':
    case 'array':
    case 'object':
    case 'string':
      prop.type = type;
      break;
    case 'date':
      prop.description = 'date (ISO 8601)';
      break;
    case 'image':
      prop.description = 'image (URL or data URI)';
      break;
  }
  if (description) prop.description = description.slice(0, 1000);
  return prop;
}

function fieldProperty(field: VariableField): Property {
  const prop = baseProperty(field.type, field.description);
  if (field.required) prop.required = true;
  return prop;
}

export function variablesToSchema(variables: TemplateVariable[]): ObjectSchema {
  const properties: Record<string, Property> = {};
  // A stored definition has items.properties as a list; one written as Flow's map reads the same.
  for (const v of normalizeVariables(variables) as TemplateVariable[]) {
    const prop = baseProperty(v.type, v.description);
    if (v.required) prop.required = true;
    if (v.type === 'array' && v.items) {
      const item = baseProperty(v.items.type);
      if (v.items.type === 'object' && v.items.properties?.length) {
        item.properties = Object.fromEntries(v.items.properties.map((f) => [f.name, fieldProperty(f)]));
      }
      prop.items = item;
    }
    properties[v.name] = prop;
  }
  return { type: 'object', properties };
}
