import type { Context, Middleware, Next } from 'koa';
import { koaBody } from 'koa-body';
import { AppError } from '../../domain/errors';
import { jsonDepthLimit } from '../middleware/json-depth';
import { unsupportedType } from '../middleware/content-types';
import { MAX_PAYLOAD_BYTES } from './submissions.service';

/**
 * The body reader of Flow submissions (POST /api/flow/gates/:id/test|validate|runs), used instead
 * of the app-wide one (docs/security.md, "Permissions"; docs/flow.md, "Limits"). It runs
 * after the route's guard, so nothing is read for a caller who may not submit, and it counts the
 * bytes as they arrive after decoding: a chunked body without Content-Length and a compressed body
 * (gzip, deflate, br) are cut off at MAX_PAYLOAD_BYTES just like a plain one, with 413
 * ERR_FLOW_RUN_005, and reading stops there. A declared Content-Length above the limit is refused
 * before a byte is read. A payload is JSON, text or a form; any other body (multipart) is a 415 ERR_REQ_007.
 */
const PATH = /^\/api\/flow\/gates\/[^/]+\/(test|validate|runs)\/?$/;

function isFlowSubmission(ctx: Pick<Context, 'method' | 'path'>): boolean {
  return ctx.method === 'POST' && PATH.test(ctx.path);
}

/** Wraps the app-wide body parser so that it leaves Flow submissions to `readSubmissionBody`. */
export function exceptFlowSubmissions(parser: Middleware): Middleware {
  return (ctx, next) => (isFlowSubmission(ctx) ? next() : parser(ctx, next));
}

const parse = koaBody({
  jsonLimit: MAX_PAYLOAD_BYTES,
  textLimit: MAX_PAYLOAD_BYTES,
  formLimit: MAX_PAYLOAD_BYTES,
  jsonStrict: false,
  includeUnparsed: true,
  multipart: false,
});

/** Decoded bytes of the body read for this request (the raw text koa-body kept). */
export function submissionBytes(ctx: Context): number {
  return (ctx.state.submissionBytes as number | undefined) ?? 0;
}

export async function readSubmissionBody(ctx: Context, next: Next): Promise<void> {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (hasBody && !ctx.is('json', 'text/*', 'urlencoded')) {
    throw unsupportedType(ctx, ['application/json', 'text/*', 'application/x-www-form-urlencoded']);
  }
  try {
    await parse(ctx, async () => undefined);
  } catch (err) {
    const e = err as { status?: number; type?: string };
    if (e?.status === 413 || e?.type === 'entity.too.large') throw new AppError('ERR_FLOW_RUN_005', undefined, { limit: MAX_PAYLOAD_BYTES });
    throw err;
  }
  const raw = (ctx.request as unknown as { rawBody?: unknown }).rawBody;
  ctx.state.submissionBytes = typeof raw === 'string' ? Buffer.byteLength(raw) : 0;
  await jsonDepthLimit(ctx, next);
}
