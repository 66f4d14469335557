import type Router from '@koa/router';
import type { Services } from '../../platform/services';
import { CONTAINER_TYPES, COMPONENTS } from '../../domain/templates/components/registry';
import type { ComponentType } from '../../domain/templates/template.types';
import { joiToJsonSchema } from '../openapi/joi-schema';
import { templateGuards, templateRouter } from './template-guards';

/**
 * GET …/component-types (docs/templates.md "Component types"): every component type with the JSON
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

function componentTypes(): { data: ComponentTypeInfo[] } {
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

/** Registered before the routes with `/:id` (templates.routes.ts); `component-types` is a reserved slug. */
export function templateComponentTypeRoutes(services: Services, prefix: string): Router {
  const router = templateRouter(prefix);
  const { read } = templateGuards(services.db);
  router.get('/component-types', read, (ctx) => {
    ctx.set('Cache-Control', 'private, max-age=300');
    ctx.body = componentTypes();
  });
  return router;
}
