import Router from '@koa/router';
import type { Services } from '../../platform/services';
import { loadUser } from '../middleware/guards';
import { validate } from '../validation';
import * as schema from './users.schema';
import { sessionTokenDeps } from './tokens.service';
import * as twoFactor from './two-factor.service';
import { handOutTokens } from './browser-session';

/** Spec "Users (JWT only)", `/api/users/me/2fa/*`: TOTP with backup codes. */
export function twoFactorRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/users/me/2fa' });
  const { db } = services;

  router.get('/status', async (ctx) => {
    const user = await loadUser(db, ctx);
    ctx.body = await twoFactor.twoFactorStatus(db, user);
  });

  router.post('/enable', async (ctx) => {
    const user = await loadUser(db, ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await twoFactor.beginTwoFactorSetup(db, user);
  });

  router.post('/verify', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { code } = validate(schema.twoFactorCodeSchema, ctx.request.body);
    const tokens = await twoFactor.completeTwoFactorSetup(db, sessionTokenDeps(services), user, code);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, ...handOutTokens(ctx, tokens, services.config) };
  });

  router.post('/disable', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { password, code } = validate(schema.disableTwoFactorSchema, ctx.request.body);
    await twoFactor.disableTwoFactor(db, user, password, code);
    ctx.body = { success: true };
  });

  router.post('/backup-codes', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { password } = validate(schema.passwordOnlySchema, ctx.request.body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { backupCodes: await twoFactor.regenerateBackupCodes(db, user, password) };
  });

  return router;
}
