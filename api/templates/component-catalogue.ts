import { CONTAINER_TYPES, COMPONENTS } from '../../domain/templates/components/registry';
import type { ComponentType } from '../../domain/templates/template.types';
import { joiToJsonSchema } from '../openapi/joi-schema';

/**
 * GET …/component-types (docs/templates.md "Component catalogue"): every component type with the JSON
 * Schema of its props, converted from the very Joi schema validate-schema and saving check them
 * with (domain/templates/components/registry.ts), so an editor built on it (the dashboard's
 * designer) and the API cannot disagree. `children` names where a container holds components:
 * `components` (repeat, box) or `columns[].components` (columns).
 */
interface ComponentTypeInfo {
  type: ComponentType;
  container: boolean;
  children: 'components' | 'columns' | null;
  props: Record<string, unknown>;
}

let catalogue: { data: ComponentTypeInfo[] } | undefined;

/** The answer of GET …/component-types, built once. */
export function componentTypes(): { data: ComponentTypeInfo[] } {
  catalogue ??= {
    data: (Object.keys(COMPONENTS) as ComponentType[]).map((type) => ({
      type,
      container: CONTAINER_TYPES.has(type),
      children: type === 'columns' ? 'columns' : CONTAINER_TYPES.has(type) ? 'components' : null,
      props: joiToJsonSchema(COMPONENTS[type].props),
    })),
  };
  return catalogue;
}

