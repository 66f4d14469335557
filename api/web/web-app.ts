import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { send } from '@koa/send';
import type { Context, Middleware, Next } from 'koa';
import { projectRootHolding } from '../project-root';

/**
 * The dashboard (docs/web.md): the single-page app Vite builds into web/dist, served by the API role
 * at `/`. Mounted after every router, so it only sees what no route took:
 * - files of the build (`/assets/…` with a content hash in the name: cached for a year; the rest briefly);
 * - any other GET that asks for a page (Accept names text/html) outside /api: the app's index.html,
 *   whose client-side router shows the page; API clients keep the JSON 404.
 * Every page has its own nonce: the only inline thing the policy allows is the component library's
 * one <style> element, which carries it (web/src/main.tsx getStyleNonce). No script runs but the
 * bundle's own files; nothing loads from another origin.
 */
const NONCE_PLACEHOLDER = '__FORMWORK_CSP_NONCE__';
const YEAR_MS = 365 * 24 * 3600 * 1000;

function pagePolicy(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    // Component props become style attributes (positions of popovers, sizes); they cannot run anything.
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** web/dist, found from here whether this runs from the sources or from dist/; undefined when the app is not built. */
function webDist(): string | undefined {
  const root = projectRootHolding(join('web', 'package.json'));
  const built = root && join(root, 'web', 'dist');
  return built && existsSync(join(built, 'index.html')) ? built : undefined;
}

export function webApp(): Middleware {
  const root = webDist();
  const index = root ? readFileSync(join(root, 'index.html'), 'utf8') : undefined;
  return async function serveWebApp(ctx: Context, next: Next): Promise<void> {
    if (!root || !index || (ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.path === '/api' || ctx.path.startsWith('/api/')) return next();
    if (/\.[a-z0-9]+$/i.test(ctx.path) && ctx.path !== '/index.html') {
      const hashed = ctx.path.startsWith('/assets/');
      try {
        await send(ctx, ctx.path, { root, immutable: hashed, maxage: hashed ? YEAR_MS : 0, gzip: false, brotli: false });
        if (!hashed) ctx.set('Cache-Control', 'no-cache');
        return;
      } catch (err) {
        // Not a file of the build (missing, or a path resolve-path refuses as leaving web/dist: 403, 400): the JSON 404.
        const status = (err as { status?: number }).status ?? 500;
        if (status >= 400 && status < 500) return next();
        throw err;
      }
    }
    if (!ctx.get('Accept').includes('text/html')) return next();
    const nonce = randomBytes(16).toString('base64');
    ctx.set('Content-Security-Policy', pagePolicy(nonce));
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = index.replaceAll(NONCE_PLACEHOLDER, nonce);
  };
}
