import Router from '@koa/router';
import type { Services } from '../../platform/services';
import { sendStoredFile } from '../storage/send-file';
import { mount } from '../openapi/route';
import { requestAccountDeletion } from './account-deletion.service';
import { userEndpoints as routes } from './identity.endpoints';
import { signedIn, signedInUser } from './signed-in';
import { presentUser } from './user.presenter';
import * as users from './users.service';
import { handOutTokens } from './browser-session';

/**
 * Spec "Users (JWT only)": the signed-in user's own account. `signedIn` (loadUser) refuses API keys
 * (403 ERR_AUTH_005), before the body is validated. Each route is declared once, in
 * identity.endpoints.ts (api/openapi/route.ts).
 */
export function userRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/users/me' });
  const { db } = services;
  const user = signedIn(db);

  mount(router, routes.me, user, async (ctx) => {
    const me = signedInUser(ctx);
    ctx.body = presentUser(me, await users.avatarUrl(services, me));
  });

  mount(router, routes.updateMe, user, async (ctx, { body }) => {
    const updated = await users.updateProfile(services, signedInUser(ctx), body);
    ctx.body = presentUser(updated, await users.avatarUrl(services, updated));
  });

  mount(router, routes.changePassword, user, async (ctx, { body }) => {
    const tokens = await users.changePassword(services, signedInUser(ctx), body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { message: 'Password changed; every session has been signed out, use the new tokens here', ...handOutTokens(ctx, tokens, services.config) };
  });

  mount(router, routes.emailPreferences, user, async (ctx) => {
    const { marketingEmails, productUpdates, weeklyDigest } = signedInUser(ctx).emailPreferences;
    ctx.body = { preferences: { marketingEmails, productUpdates, weeklyDigest } };
  });

  mount(router, routes.updateEmailPreferences, user, async (ctx, { body }) => {
    const preferences = await users.updateEmailPreferences(services, signedInUser(ctx), body);
    ctx.body = { message: 'Email preferences updated', preferences };
  });

  // The picture's bytes, for a page of this origin (the signed link may be a bucket's); an image, never run.
  mount(router, routes.avatar, user, async (ctx) => {
    sendStoredFile(ctx, await users.readAvatar(services, signedInUser(ctx)), { cacheControl: 'private, no-cache' });
  });

  mount(router, routes.avatarRequirements, user, (ctx) => {
    ctx.body = { formats: ['image/jpeg', 'image/png', 'image/webp'], maxBytes: services.config.users.avatarMaxBytes };
  });

  mount(router, routes.setAvatar, user, async (ctx, { body }) => {
    ctx.body = { message: 'Profile picture updated', avatarUrl: await users.setAvatar(services, signedInUser(ctx), body.imageData) };
  });

  mount(router, routes.removeAvatar, user, async (ctx) => {
    await users.removeAvatar(services, signedInUser(ctx));
    ctx.body = { message: 'Profile picture removed' };
  });

  mount(router, routes.exportAccount, user, async (ctx) => {
    const data = await users.exportAccount(services, signedInUser(ctx));
    ctx.set('Content-Disposition', `attachment; filename="formwork-account-${data.exportedAt.slice(0, 10)}.json"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = data;
  });

  // The password travels in the DELETE body (the app's body parser reads DELETE bodies too).
  mount(router, routes.deleteAccount, user, async (ctx, { body }) => {
    const { purgeAfter } = await requestAccountDeletion(services, signedInUser(ctx), body);
    ctx.body = {
      message: `Account scheduled for deletion on ${purgeAfter.toISOString()}; until then it can be restored with POST /api/auth/restore-account`,
    };
  });

  return router;
}
