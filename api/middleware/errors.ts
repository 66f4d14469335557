import type { Context, Next } from 'koa';
import { AppError, errorBody, isErrorCode } from '../../domain/errors';
import type { Logger } from '../../domain/logger';
import { settleRefusedBody } from './refused-body';

/**
 * The one place errors become responses: every failure, thrown anywhere below, is answered with
 * the spec's error body. Body-parser and Koa errors are mapped to catalogue codes; anything
 * unknown is logged with the request id and answered as a generic 500 without internals.
 */
export function errorRenderer(logger: Logger) {
  return async function renderErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      // @koa/router's allowedMethods answers a known path asked with another method by a bare 405
      // and its `Allow` header (the union of the methods every router takes on the path), which
      // stays; the body is the spec's (docs/errors.md "Methods and content types").
      if (ctx.status === 405 && ctx.body == null) {
        throw new AppError('ERR_REQ_006', `${ctx.method} is not allowed on ${ctx.path}; it takes ${ctx.response.get('Allow') || 'no method'}`, {
          allowed: String(ctx.response.get('Allow')).split(/,\s*/).filter(Boolean),
        });
      }
      // A method no route takes anywhere (PROPFIND, TRACE): the router's bare 501, with `Allow`.
      if (ctx.status === 501 && ctx.body == null) {
        throw new AppError('ERR_REQ_008', `${ctx.method} is not a method this service takes; ${ctx.path} takes ${ctx.response.get('Allow') || 'no method'}`, {
          allowed: String(ctx.response.get('Allow')).split(/,\s*/).filter(Boolean),
        });
      }
      if (ctx.status === 404 && ctx.body == null) throw new AppError('ERR_REQ_003', `Cannot ${ctx.method} ${ctx.path}`);
    } catch (thrown) {
      const err = toAppError(thrown);
      if (err.status >= 500) {
        logger.error('request failed', { requestId: ctx.state.requestId, path: ctx.path, method: ctx.method, err: thrown });
      }
      ctx.status = err.status;
      // A 429 thrown deep in a service (e.g. a locked sign-in, ERR_AUTH_015) carries its wait in the
      // header too; the body has it at the top level (errorBody) and in relatedInfo.
      const retryAfter = err.relatedInfo?.retryAfter;
      if ((err.status === 429 || err.status === 503) && typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
      // A body refused before it was read whole (413 while it streamed, 415, a refused upload)
      // leaves the rest of it on the socket: it is read and discarded after the answer, up to a
      // bound, so the connection carries the client's next request (docs/errors.md "Refused bodies and the connection").
      settleRefusedBody(ctx);
      ctx.type = 'application/json';
      ctx.body = errorBody(err, ctx.originalUrl.split('?')[0]);
    }
  };
}

function toAppError(thrown: unknown): AppError {
  if (thrown instanceof AppError) return thrown;
  const e = thrown as { status?: number; statusCode?: number; httpCode?: number; type?: string; code?: string; expose?: boolean; message?: string };
  // formidable (multipart uploads, through koa-body) reports its status as `httpCode`: 413 for a
  // file over the limit, 400 for a malformed form.
  const status = e?.status ?? e?.statusCode ?? e?.httpCode;
  if (isErrorCode(e?.code)) return new AppError(e.code, e.message);
  if (status === 413 || e?.type === 'entity.too.large') return new AppError('ERR_REQ_002');
  if (e?.type === 'entity.parse.failed' || (status === 400 && /JSON/i.test(e?.message ?? ''))) return new AppError('ERR_REQ_001');
  if (status === 415) return new AppError('ERR_REQ_007');
  if (status === 400 && (e?.expose || e?.httpCode)) return new AppError('ERR_VALID_001', e.message);
  return new AppError('ERR_INTERNAL_001');
}
