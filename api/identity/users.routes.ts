import Router from '@koa/router';
import type { Services } from '../../platform/services';
import { loadUser } from '../middleware/guards';
import { sendStoredFile } from '../storage/send-file';
import { validate } from '../validation';
import { requestAccountDeletion } from './account-deletion.service';
import { presentUser } from './user.presenter';
import * as schema from './users.schema';
import * as users from './users.service';
import { handOutTokens } from './browser-session';

/** Spec "Users (JWT only)": the signed-in user's own account. `loadUser` refuses API keys (403 ERR_AUTH_005). */
export function userRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/users/me' });
  const { db } = services;

  router.get('/', async (ctx) => {
    const user = await loadUser(db, ctx);
    ctx.body = presentUser(user, await users.avatarUrl(services, user));
  });

  router.patch('/', async (ctx) => {
    const user = await loadUser(db, ctx);
    const updated = await users.updateProfile(services, user, validate(schema.updateMeSchema, ctx.request.body));
    ctx.body = presentUser(updated, await users.avatarUrl(services, updated));
  });

  router.post('/change-password', async (ctx) => {
    const user = await loadUser(db, ctx);
    const tokens = await users.changePassword(services, user, validate(schema.changePasswordSchema, ctx.request.body));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { message: 'Password changed; every session has been signed out, use the new tokens here', ...handOutTokens(ctx, tokens, services.config) };
  });

  router.get('/email-preferences', async (ctx) => {
    const { marketingEmails, productUpdates, weeklyDigest } = (await loadUser(db, ctx)).emailPreferences;
    ctx.body = { preferences: { marketingEmails, productUpdates, weeklyDigest } };
  });

  router.patch('/email-preferences', async (ctx) => {
    const user = await loadUser(db, ctx);
    const preferences = await users.updateEmailPreferences(services, user, validate(schema.emailPreferencesSchema, ctx.request.body));
    ctx.body = { message: 'Email preferences updated', preferences };
  });

  // The picture's bytes, for a page of this origin (the signed link may be a bucket's); an image, never run.
  router.get('/avatar', async (ctx) => {
    sendStoredFile(ctx, await users.readAvatar(services, await loadUser(db, ctx)), { cacheControl: 'private, no-cache' });
  });

  router.get('/avatar/requirements', async (ctx) => {
    await loadUser(db, ctx);
    ctx.body = { formats: ['image/jpeg', 'image/png', 'image/webp'], maxBytes: services.config.users.avatarMaxBytes };
  });

  router.post('/avatar', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { imageData } = validate(schema.avatarSchema, ctx.request.body);
    ctx.body = { message: 'Profile picture updated', avatarUrl: await users.setAvatar(services, user, imageData) };
  });

  router.delete('/avatar', async (ctx) => {
    const user = await loadUser(db, ctx);
    await users.removeAvatar(services, user);
    ctx.body = { message: 'Profile picture removed' };
  });

  router.get('/export', async (ctx) => {
    const user = await loadUser(db, ctx);
    const data = await users.exportAccount(services, user);
    ctx.set('Content-Disposition', `attachment; filename="formwork-account-${data.exportedAt.slice(0, 10)}.json"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = data;
  });

  // The password travels in the DELETE body (the app's body parser reads DELETE bodies too).
  router.delete('/', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { purgeAfter } = await requestAccountDeletion(services, user, validate(schema.deleteAccountSchema, ctx.request.body));
    ctx.body = {
      message: `Account scheduled for deletion on ${purgeAfter.toISOString()}; until then it can be restored with POST /api/auth/restore-account`,
    };
  });

  return router;
}
