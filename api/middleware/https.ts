import type { Context, Next } from 'koa';
import { AppError } from '../../domain/errors';

/**
 * In production plain HTTP is refused (contract §1): the connection must be TLS, or a trusted
 * proxy must say it was (X-Forwarded-Proto, honoured only with TRUST_PROXY via koa's `proxy`).
 */
export function requireHttps(enabled: boolean) {
  return async function https(ctx: Context, next: Next): Promise<void> {
    if (enabled && ctx.protocol !== 'https' && ctx.path !== '/api/health') throw new AppError('ERR_REQ_004');
    await next();
  };
}
