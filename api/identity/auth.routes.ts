import Router from '@koa/router';
import { UserEntity } from '../../db/identity/user.entity';
import type { Services } from '../../platform/services';
import { loadUser } from '../middleware/guards';
import { mount } from '../openapi/route';
import { consumeOrRefuse, resendLimiters } from '../rate-limits';
import { validate } from '../validation';
import { attemptLimits } from './attempt-limits';
import * as schema from './auth.schema';
import * as auth from './auth.service';
import { authEndpoints as routes } from './identity.endpoints';
import { revokeRefreshFamily, rotateRefreshToken } from './tokens.service';
import { presentUser } from './user.presenter';
import { avatarUrl } from './users.service';
import { clearRefreshCookie, cookieSession, handOutTokens, keepRefreshInCookie, REFRESH_COOKIE, refreshFromCookie } from './browser-session';

/**
 * Contract §2: how a JWT is obtained, renewed and given up. Each route is declared once, in
 * identity.endpoints.ts (api/openapi/route.ts), signup and forgot-password with their own code for a
 * malformed e-mail (`codes`); refresh and logout read the refresh token from
 * the body only outside a browser session.
 */
export function authRoutes(services: Services, checkSecondFactor: auth.SecondFactorCheck = auth.noSecondFactor): Router {
  const router = new Router({ prefix: '/api/auth' });
  const { config } = services;
  const cookie = { maxAgeSeconds: config.auth.refreshTokenTtlSeconds, secure: config.production };

  mount(router, routes.signup, async (ctx, { body }) => {
    const { user, ...tokens } = await auth.signup(services, body);
    ctx.status = 201;
    ctx.body = { user: presentUser(user), ...handOutTokens(ctx, tokens, config) };
  });

  mount(router, routes.login, async (ctx, { body }) => {
    const { user, ...tokens } = await auth.login(services, body, checkSecondFactor);
    ctx.body = { user: presentUser(user, await avatarUrl(services, user)), ...handOutTokens(ctx, tokens, config) };
  });

  mount(router, routes.refresh, async (ctx) => {
    const inCookie = cookieSession(ctx, config.publicUrl);
    const refreshToken = inCookie ? refreshFromCookie(ctx) : validate(schema.refreshSchema, ctx.request.body).refreshToken;
    const { userId, tokens } = await rotateRefreshToken(auth.tokenDeps(services), refreshToken);
    const user = await services.db.getRepository(UserEntity).findOneByOrFail({ id: userId });
    ctx.body = { user: presentUser(user, await avatarUrl(services, user)), ...(inCookie ? keepRefreshInCookie(ctx, tokens, cookie) : tokens) };
  });

  mount(router, routes.logout, async (ctx) => {
    if (cookieSession(ctx, config.publicUrl)) {
      const refreshToken = ctx.cookies.get(REFRESH_COOKIE);
      clearRefreshCookie(ctx, config.production);
      if (refreshToken && refreshToken.length <= 200) await revokeRefreshFamily(services.db, refreshToken);
    } else {
      const { refreshToken } = validate(schema.refreshSchema, ctx.request.body);
      await revokeRefreshFamily(services.db, refreshToken);
    }
    ctx.body = { message: 'Logged out' };
  });

  mount(router, routes.verifyEmail, async (ctx, { body }) => {
    await auth.verifyEmail(services.db, body.token);
    ctx.body = { message: 'Email verified' };
  });

  mount(router, routes.resendVerification, async (ctx) => {
    const user = await loadUser(services.db, ctx);
    if (!user.emailVerifiedAt) {
      await attemptLimits(services).verificationEmail.spend(user.id);
      // RESEND_PER_RECIPIENT_PER_HOUR: the same budget per address as approval-link re-sends.
      await consumeOrRefuse(resendLimiters(services).perRecipient, user.email.toLowerCase(), 'ERR_LIMIT_012');
      await auth.sendAccountEmail(services, user.id, 'verify_email');
    }
    ctx.body = { message: user.emailVerifiedAt ? 'Email already verified' : 'Verification email sent' };
  });

  mount(router, routes.forgotPassword, async (ctx, { body }) => {
    await auth.forgotPassword(services, body.email);
    ctx.body = { message: 'If an account exists for this address, a reset link has been sent' };
  });

  mount(router, routes.resetPassword, async (ctx, { body }) => {
    await auth.resetPassword(services.db, body.token, body.newPassword);
    ctx.body = { message: 'Password updated' };
  });

  return router;
}
