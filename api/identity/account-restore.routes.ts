import Router from '@koa/router';
import type { Services } from '../../platform/services';
import { validate } from '../validation';
import { restoreAccount } from './account-deletion.service';
import { restoreAccountSchema } from './users.schema';

/** Contract §2: `POST /api/auth/restore-account` during the grace period; no session needed (login is refused then). */
export function accountRestoreRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/auth' });

  router.post('/restore-account', async (ctx) => {
    await restoreAccount(services, validate(restoreAccountSchema, ctx.request.body));
    ctx.body = { message: 'Account restored; you can sign in again' };
  });

  return router;
}
