import type { Context, Middleware } from 'koa';
import type { DataSource } from 'typeorm';
import type { UserEntity } from '../../db/identity/user.entity';
import { loadUser } from '../middleware/guards';

/**
 * Guard: the caller's own user session (`loadUser`: 401 without one, 403 ERR_AUTH_005 for an API
 * key, ...). Put before mount()'s validation, as the handlers used to load the user before
 * validating the body; the handler reads the user with `signedInUser(ctx)`.
 */
export function signedIn(db: DataSource): Middleware {
  return async (ctx, next) => {
    await loadUser(db, ctx);
    await next();
  };
}

/** The user `signedIn` loaded. */
export const signedInUser = (ctx: Context): UserEntity => ctx.state.user as UserEntity;
