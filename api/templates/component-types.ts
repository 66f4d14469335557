import type Router from '@koa/router';
import type { Services } from '../../platform/services';
import { componentTypes } from './component-catalogue';
import { templateGuards, templateRouter } from './template-guards';

/** Registered before the routes with `/:id` (templates.routes.ts); `component-types` is a reserved slug. */
export function templateComponentTypeRoutes(services: Services, prefix: string): Router {
  const router = templateRouter(prefix);
  const { designerRead } = templateGuards(services.db);
  router.get('/component-types', designerRead, (ctx) => {
    ctx.set('Cache-Control', 'private, max-age=300');
    ctx.body = componentTypes();
  });
  return router;
}
