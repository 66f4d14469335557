import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../domain/errors';

/**
 * The JSON bodies of POST /api/templates/validate-schema and validate-variables are not parsed
 * here: the route reads their bytes (after its guard) and the evaluation worker that checks the
 * template parses them (domain/checks.ts). The whole of such a request is work on what a tenant
 * wrote, and parsing and re-serializing a body of several MB held the loop that serves every other
 * request for tens of milliseconds (docs/security.md, "Untrusted input"). Same limit
 * (JSON_BODY_LIMIT, 413 ERR_REQ_002), same encodings (gzip, deflate, br) and the same answers as the
 * app-wide parser; a body that is not JSON is refused before (415, api/middleware/content-types.ts).
 */
const PATH = /^\/api\/templates\/validate-(schema|variables)\/?$/;

export function isTemplateCheckJson(ctx: Pick<Context, 'method' | 'path' | 'is'>): boolean {
  return ctx.method === 'POST' && PATH.test(ctx.path) && ctx.is('json') !== false && ctx.is('json') !== null;
}

/** Wraps the app-wide body parser so that it leaves template checks' JSON bodies to `readJsonBytes`. */
export function exceptTemplateChecks(parser: Middleware): Middleware {
  return (ctx, next) => (isTemplateCheckJson(ctx) ? next() : parser(ctx, next));
}

const DECODERS: Record<string, (() => Transform) | undefined> = { gzip: createGunzip, deflate: createInflate, br: createBrotliDecompress };

/** The body's decoded bytes, at most `limit` of them (bytes or '10mb'; 413 ERR_REQ_002 past it, reading stops there). */
export async function readJsonBytes(ctx: Context, limit: number | string): Promise<Buffer> {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
  const decoder = DECODERS[encoding];
  if (!decoder && encoding !== 'identity') {
    throw new AppError('ERR_VALID_001', `Unsupported Content-Encoding '${encoding}'`, { field: 'Content-Encoding' });
  }
  const length = decoder ? undefined : ctx.get('content-length') || undefined;
  try {
    return await getRawBody(decoder ? ctx.req.pipe(decoder()) : ctx.req, { limit, length });
  } catch (err) {
    const e = err as { type?: string; code?: string };
    if (e.type === 'entity.too.large') throw new AppError('ERR_REQ_002');
    if (typeof e.code === 'string' && e.code.startsWith('Z_')) throw new AppError('ERR_REQ_001', 'The body could not be decoded');
    throw err;
  }
}
