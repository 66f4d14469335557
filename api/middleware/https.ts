import type { Context, Next } from 'koa';
import { AppError } from '../../domain/errors';

/**
 * In production plain HTTP is refused (contract §1): the connection must be TLS, or a trusted
 * proxy must say it was (X-Forwarded-Proto, honoured only with TRUST_PROXY).
 */
export function requireHttps(enabled: boolean, proxyHops: number) {
  return async function https(ctx: Context, next: Next): Promise<void> {
    if (enabled && clientProtocol(ctx, proxyHops) !== 'https' && ctx.path !== '/api/health') throw new AppError('ERR_REQ_004');
    await next();
  };
}

/**
 * The protocol the client used. Without trusted proxies, the connection's own. With `hops` of them,
 * the X-Forwarded-Proto value the outermost one wrote: proxies that append put theirs at the right,
 * so a value the client sent itself (leftmost) never counts, unlike koa's `ctx.protocol`, which
 * reads the first one. A proxy that overwrites the header leaves one value, which is its own.
 */
function clientProtocol(ctx: Context, hops: number): string {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted) return 'https';
  if (hops <= 0) return 'http';
  const values = ctx.get('X-Forwarded-Proto').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
  if (values.length === 0) return 'http';
  return values[Math.max(0, values.length - hops)];
}
