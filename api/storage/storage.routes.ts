import Router from '@koa/router';
import type { Context } from 'koa';
import { FILES_ROUTE_PREFIX, type LocalStorage } from '../../adapters/storage/local-storage';
import { contentDisposition } from '../../adapters/storage/storage';
import { mount } from '../openapi/route';
import { storageEndpoints } from './storage.endpoints';

/**
 * Serves artefacts of the local storage adapter through their signed, expiring links.
 * Mounted only when artefacts live on disk; with S3 the links point at the bucket instead.
 * No authentication: the signature is the credential, as with an S3 presigned URL.
 */
export function createFileRoutes(storage: LocalStorage): Router {
  const router = new Router();

  // GET FILES_ROUTE_PREFIX/*key, the links the adapter signs (declared in storage.endpoints.ts).
  mount(router, storageEndpoints.download, async (ctx) => {
    const key = ctx.params.key ?? '';
    // Throws ERR_FILE_003 / ERR_FILE_002 before the disk is touched.
    const { filename } = storage.verifyDownload(key, ctx.query);
    const object = await storage.get(key);

    // Koa destroys the stream if the client goes away or on HEAD, so no descriptor leaks.
    ctx.body = object.body;
    ctx.type = object.contentType;
    ctx.length = object.size;
    ctx.set('Content-Disposition', contentDisposition(filename));
    ctx.set('Cache-Control', 'private');
    // The stored content type is authoritative; browsers must not sniff a PDF into HTML.
    ctx.set('X-Content-Type-Options', 'nosniff');
  });

  return router;
}

/**
 * For the rate limiter (api/middleware/rate-limit.ts): a request bearing a valid, unexpired signed
 * link is counted on the link's owner, the first two segments of its key (`documents/<projectId>`,
 * `flow-runs/<projectId>`, `avatars/<userId>`), under RATE_LIMIT_FILE_LINKS. Anything else, a
 * forged, edited or expired link included, is left to the caller's ordinary (anonymous) budget.
 */
export function fileLinkOwner(storage: LocalStorage): (ctx: Context) => string | undefined {
  const prefix = `${FILES_ROUTE_PREFIX}/`;
  return (ctx) => {
    if (!ctx.path.startsWith(prefix) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return undefined;
    let key: string;
    try {
      key = decodeURIComponent(ctx.path.slice(prefix.length));
      storage.verifyDownload(key, ctx.query);
    } catch {
      return undefined;
    }
    return key.split('/').slice(0, 2).join('/');
  };
}
