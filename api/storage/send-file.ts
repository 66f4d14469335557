import type { Context } from 'koa';
import type { StoredObject } from '../../adapters/storage/storage';

/**
 * Answers a stored object's bytes as a file to show or save, never a page to run: the stored content
 * type (browsers must not sniff a PDF into HTML), its length, a sandbox policy for anyone who opens it
 * directly, and the caller's caching and disposition. Koa destroys the stream if the client goes away.
 */
export function sendStoredFile(ctx: Context, file: Pick<StoredObject, 'body' | 'contentType' | 'size'>, options: { cacheControl: string; disposition?: string }): void {
  ctx.type = file.contentType;
  ctx.length = file.size;
  ctx.set('Cache-Control', options.cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
  if (options.disposition) ctx.set('Content-Disposition', options.disposition);
  ctx.body = file.body;
}
