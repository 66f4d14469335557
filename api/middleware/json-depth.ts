import type { Middleware } from 'koa';
import { AppError } from '../../domain/errors';

/**
 * Deepest JSON nesting a request body may have. Parsing a deeper body is cheap, but everything
 * after it recurses (JSON.stringify, storing jsonb, handing a payload to an evaluation worker) and
 * would fail with a stack overflow: a 500 instead of the client's mistake. No template, schema or
 * payload the service reads needs more than a few dozen levels. docs/security.md.
 */
export const MAX_JSON_DEPTH = 100;

/** Nesting depth of JSON text, counted in one pass (brackets inside strings do not count); stops past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth -= 1;
    }
  }
  return false;
}

/** After the body parser: a JSON body nested deeper than MAX_JSON_DEPTH is a 400 ERR_REQ_005. */
export const jsonDepthLimit: Middleware = async (ctx, next) => {
  const parsed = ctx.request.body as unknown;
  if (parsed !== null && typeof parsed === 'object' && ctx.is('json')) {
    const raw = (ctx.request as unknown as { rawBody?: unknown }).rawBody ?? (parsed as Record<symbol, unknown>)[Symbol.for('unparsedBody')];
    if (typeof raw === 'string' && jsonDepthExceeds(raw, MAX_JSON_DEPTH)) {
      throw new AppError('ERR_REQ_005', `JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, { limit: MAX_JSON_DEPTH });
    }
  }
  await next();
};
