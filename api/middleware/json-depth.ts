import type { Middleware } from 'koa';
import { jsonDepthExceeds, MAX_JSON_DEPTH, tooDeep } from '../../domain/json-body';

/** After the body parser: a JSON body nested deeper than MAX_JSON_DEPTH is a 400 ERR_REQ_005. */
export const jsonDepthLimit: Middleware = async (ctx, next) => {
  const parsed = ctx.request.body as unknown;
  if (parsed !== null && typeof parsed === 'object' && ctx.is('json')) {
    const raw = (ctx.request as unknown as { rawBody?: unknown }).rawBody ?? (parsed as Record<symbol, unknown>)[Symbol.for('unparsedBody')];
    if (typeof raw === 'string' && jsonDepthExceeds(raw, MAX_JSON_DEPTH)) {
      throw tooDeep();
    }
  }
  await next();
};
