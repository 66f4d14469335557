import type Router from '@koa/router';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import { componentTypes } from './component-catalogue';
import { templateEndpointsAt, type TemplatePrefix } from './templates.endpoints';
import { templateGuards, templateRouter } from './template-guards';

/** Registered before the routes with `/:id` (templates.routes.ts); `component-types` is a reserved slug. */
export function templateComponentTypeRoutes(services: Services, prefix: TemplatePrefix): Router {
  const router = templateRouter(prefix);
  const { designerRead } = templateGuards(services.db);
  mount(router, templateEndpointsAt[prefix].componentTypes, designerRead, (ctx) => {
    ctx.set('Cache-Control', 'private, max-age=300');
    ctx.body = componentTypes();
  });
  return router;
}
