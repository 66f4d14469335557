import Router from '@koa/router';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import { restoreAccount } from './account-deletion.service';
import { authEndpoints } from './identity.endpoints';

/** Contract §2: `POST /api/auth/restore-account` during the grace period; no session needed (login is refused then). */
export function accountRestoreRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/auth' });

  mount(router, authEndpoints.restoreAccount, async (ctx, { body }) => {
    await restoreAccount(services, body);
    ctx.body = { message: 'Account restored; you can sign in again' };
  });

  return router;
}
