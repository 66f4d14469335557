import Router from '@koa/router';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import { userEndpoints as routes } from './identity.endpoints';
import { signedIn, signedInUser } from './signed-in';
import { sessionTokenDeps } from './tokens.service';
import * as twoFactor from './two-factor.service';
import { handOutTokens } from './browser-session';

/**
 * Spec "Users (JWT only)", `/api/users/me/2fa/*`: TOTP with backup codes. Declared in
 * identity.endpoints.ts; `signedIn` loads the user before the body is validated.
 */
export function twoFactorRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/users/me/2fa' });
  const { db } = services;
  const user = signedIn(db);

  mount(router, routes.twoFactorStatus, user, async (ctx) => {
    ctx.body = await twoFactor.twoFactorStatus(db, signedInUser(ctx));
  });

  mount(router, routes.enableTwoFactor, user, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await twoFactor.beginTwoFactorSetup(db, signedInUser(ctx));
  });

  mount(router, routes.verifyTwoFactor, user, async (ctx, { body }) => {
    const tokens = await twoFactor.completeTwoFactorSetup(db, sessionTokenDeps(services), signedInUser(ctx), body.code);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...handOutTokens(ctx, tokens, services.config) };
  });

  mount(router, routes.disableTwoFactor, user, async (ctx, { body }) => {
    await twoFactor.disableTwoFactor(db, signedInUser(ctx), body.password, body.code);
    ctx.body = { success: true };
  });

  mount(router, routes.backupCodes, user, async (ctx, { body }) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { backupCodes: await twoFactor.regenerateBackupCodes(db, signedInUser(ctx), body.password) };
  });

  return router;
}
