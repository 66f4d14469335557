import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { AppError } from '../../domain/errors';

export interface UploadLimits {
  /** Largest file, and largest total of all files, of one request (UPLOAD_MAX_BYTES). */
  maxFileBytes: number;
  /** Largest total of the form's text fields (UPLOAD_FIELDS_MAX_BYTES). */
  maxFieldsBytes: number;
  /** Where uploads are written while the request runs (UPLOAD_TMP_DIR). */
  tmpDir: string;
}

/** Paths of the routes that mount multipartUpload (filled as the routers are built); patterns for paths with ids. */
const uploadPaths = new Set<string>();
const uploadPatterns: RegExp[] = [];

/**
 * Before any route: a multipart body sent to a route that takes no file is refused unread with
 * 400 ERR_VALID_001 (`relatedInfo.field: "Content-Type"`, as for other content types a route does
 * not take), instead of reaching the route as an empty body.
 */
export async function refuseStrayMultipart(ctx: Context, next: Next): Promise<void> {
  const path = ctx.path.replace(/\/+$/, '');
  if (ctx.is('multipart') && !uploadPaths.has(path) && !uploadPatterns.some((p) => p.test(path))) {
    throw new AppError('ERR_VALID_001', `${ctx.method} ${ctx.path} takes no multipart/form-data body: send JSON`, { field: 'Content-Type' });
  }
  return next();
}

/**
 * Parses a `multipart/form-data` body for the route at `path`: the only place the service accepts one. Mounted on the file
 * routes after the credential and permission guards, so an anonymous or unauthorised caller never
 * has a byte written to disk. Each request writes into a directory of its own, removed when the
 * request ends whatever happened (route error, refused field, an upload cut off half-way), so no
 * temp file outlives its request. One file per request; other content types pass through to the
 * JSON parser's result untouched.
 */
export function multipartUpload(limits: UploadLimits, path: string | RegExp) {
  if (typeof path === 'string') uploadPaths.add(path);
  else uploadPatterns.push(path);
  return async function parseUpload(ctx: Context, next: Next): Promise<void> {
    if (!ctx.is('multipart')) return next();
    await mkdir(limits.tmpDir, { recursive: true });
    const dir = await mkdtemp(join(limits.tmpDir, 'formwork-upload-'));
    try {
      const parse = koaBody({
        multipart: true,
        json: false,
        text: false,
        urlencoded: false,
        formidable: {
          uploadDir: dir,
          maxFiles: 1,
          maxFields: 20,
          maxFileSize: limits.maxFileBytes,
          maxTotalFileSize: limits.maxFileBytes,
          maxFieldsSize: limits.maxFieldsBytes,
          // An empty upload reaches the route, which can say what is wrong with it (e.g. ERR_TMPL_016).
          allowEmptyFiles: true,
          minFileSize: 0,
        },
      });
      await parse(ctx, next);
    } catch (e) {
      // A refused upload (413 past the limit, a bad part) is answered while the client may still be
      // sending. formidable can leave the request paused when it fails during a file write, so the
      // client would block on a full socket and never read the answer (seen as ECONNRESET): read the
      // rest and discard it, as Node does for a body no one read (bounded by the server's request timeout).
      if (!ctx.req.complete) {
        ctx.req.removeAllListeners('data');
        ctx.req.resume();
      }
      throw e;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

/**
 * multipartUpload whose over-size answer is the route's own code: past `limits.maxFileBytes`, while
 * the file streams, `tooLarge()` is thrown instead of the parser's 413 ERR_REQ_002. An error the
 * route itself throws passes unchanged.
 */
export function multipartUploadAs(limits: UploadLimits, path: string | RegExp, tooLarge: () => AppError) {
  const upload = multipartUpload(limits, path);
  return async function parseUploadAs(ctx: Context, next: Next): Promise<void> {
    let inRoute = false;
    try {
      await upload(ctx, () => {
        inRoute = true;
        return next();
      });
    } catch (err) {
      const e = err as { httpCode?: number; status?: number; code?: string };
      if (!inRoute && (e?.httpCode === 413 || e?.status === 413 || e?.code === 'ERR_REQ_002')) throw tooLarge();
      throw err;
    }
  };
}
