import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
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

/** What a route may ask of its uploads beyond the limits. */
interface UploadOptions {
  /** Files one request may carry (default 1); their total stays within `maxFileBytes`. */
  maxFiles?: number;
  /**
   * Checks each file's first `headBytes` bytes as they arrive (fewer for a shorter file): an error
   * it answers stops the upload at once, before the rest is read or written, and is the answer.
   */
  checkHead?: { headBytes: number; check: (head: Buffer, file: { field: string; index: number }) => Error | undefined };
}

/**
 * A file's write stream that checks its first bytes (UploadOptions.checkHead) before anything is
 * written to `path`: a refused file stops the upload with the check's error. A file shorter than
 * `headBytes` is written as it is (the parser has finished with it by then): the route checks it.
 */
function checkedWriteStream(path: string, checkHead: NonNullable<UploadOptions['checkHead']>, file: { field: string; index: number }): Writable {
  let out: WriteStream | undefined;
  let head = Buffer.alloc(0);
  const open = (self: Writable) => {
    out = createWriteStream(path, { mode: 0o600 });
    out.on('error', (err) => self.destroy(err));
    return out;
  };
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!out) {
        head = Buffer.concat([head, chunk]);
        if (head.length < checkHead.headBytes) return done();
        const refused = checkHead.check(head, file);
        if (refused) return done(refused);
        chunk = head;
        open(this);
      }
      if (out!.write(chunk)) done();
      else out!.once('drain', () => done());
    },
    final(done) {
      (out ?? open(this)).end(out ? undefined : head, () => done());
    },
    destroy(err, done) {
      out?.destroy();
      done(err);
    },
  });
}

/** Paths of the routes that mount multipartUpload (filled as the routers are built); patterns for paths with ids. */
const uploadPaths = new Set<string>();
const uploadPatterns: RegExp[] = [];

/** Whether a route takes a multipart body at `path` (no trailing slash): one that mounts multipartUpload. */
export function takesMultipart(path: string): boolean {
  return uploadPaths.has(path) || uploadPatterns.some((p) => p.test(path));
}

/**
 * Parses a `multipart/form-data` body for the route at `path`: the only place the service accepts one. Mounted on the file
 * routes after the credential and permission guards, so an anonymous or unauthorised caller never
 * has a byte written to disk. Each request writes into a directory of its own, removed when the
 * request ends whatever happened (route error, refused field, an upload cut off half-way), so no
 * temp file outlives its request. One file per request unless the route allows more (`UploadOptions`); other content types pass through to the
 * JSON parser's result untouched.
 */
export function multipartUpload(limits: UploadLimits, path: string | RegExp, options: UploadOptions = {}) {
  if (typeof path === 'string') uploadPaths.add(path);
  else uploadPatterns.push(path);
  return async function parseUpload(ctx: Context, next: Next): Promise<void> {
    if (!ctx.is('multipart')) return next();
    await mkdir(limits.tmpDir, { recursive: true });
    const dir = await mkdtemp(join(limits.tmpDir, 'formwork-upload-'));
    const { checkHead } = options;
    let files = 0;
    try {
      const parse = koaBody({
        multipart: true,
        json: false,
        text: false,
        urlencoded: false,
        formidable: {
          uploadDir: dir,
          maxFiles: options.maxFiles ?? 1,
          maxFields: 20,
          maxFileSize: limits.maxFileBytes,
          maxTotalFileSize: limits.maxFileBytes,
          maxFieldsSize: limits.maxFieldsBytes,
          // An empty upload reaches the route, which can say what is wrong with it (e.g. ERR_TMPL_016).
          allowEmptyFiles: true,
          minFileSize: 0,
          ...(checkHead && {
            fileWriteStreamHandler: (file?: unknown) => {
              const f = file as { filepath: string };
              return checkedWriteStream(f.filepath, checkHead, { field: 'files', index: files++ });
            },
          }),
        },
      });
      await parse(ctx, next);
    } catch (e) {
      // A refused upload (413 past the limit, a bad part) is answered while the client may still be
      // sending: the error renderer reads the rest of the body, up to a bound, before answering
      // (api/middleware/refused-body.ts).
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
export function multipartUploadAs(limits: UploadLimits, path: string | RegExp, tooLarge: () => AppError, options: UploadOptions = {}) {
  const upload = multipartUpload(limits, path, options);
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
