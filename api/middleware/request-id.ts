import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/** Keeps a caller's X-Request-Id when it is sane, otherwise mints one; echoed on every response. */
export async function requestId(ctx: Context, next: Next): Promise<void> {
  const given = ctx.get('X-Request-Id');
  ctx.state.requestId = VALID.test(given) ? given : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
}
