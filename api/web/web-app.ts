import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { send } from '@koa/send';
import type { Context, Middleware, Next } from 'koa';
import { escapeHtml } from '../identity/account-pages.html';
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
 *
 * `page` answers a request with the app's page from a route of its own: the links in account e-mails
 * (`/verify-email`, `/reset-password`, `/invitations/:id`) open the app, whose `<noscript>` then
 * names the page that works without script (api/identity/account-pages.routes.ts).
 */
const NONCE_PLACEHOLDER = '__FORMWORK_CSP_NONCE__';
/** Inside index.html's <noscript>: where a page adds its link for browsers without script. */
const NOSCRIPT_PLACEHOLDER = '<!--formwork:noscript-->';
const YEAR_MS = 365 * 24 * 3600 * 1000;

/**
 * `frameAncestor`: the one origin allowed to put this page in a frame (the embedded designer,
 * docs/embedding.md: the embed token's origin, on the project's list); every other page is
 * `frame-ancestors 'none'`.
 */
function pagePolicy(nonce: string, frameAncestor?: string): string {
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
    `frame-ancestors ${frameAncestor ?? "'none'"}`,
  ].join('; ');
}

/** web/dist, found from here whether this runs from the sources or from dist/; undefined when the app is not built. */
function webDist(): string | undefined {
  const root = projectRootHolding(join('web', 'package.json'));
  const built = root && join(root, 'web', 'dist');
  return built && existsSync(join(built, 'index.html')) ? built : undefined;
}

/** A link a browser without script is offered instead of the app's page (escaped here). */
export interface NoScriptLink {
  href: string;
  text: string;
}

export interface WebApp {
  /** Serves what no route took: files of the build, and the app's page for a browser's navigation. */
  middleware: Middleware;
  /** Answers with the app's page (and `noscript`'s link for browsers without script); absent when the app is not built. */
  page?: (ctx: Context, noscript?: NoScriptLink, options?: PageOptions) => void;
}

export interface PageOptions {
  /** An origin (validated: api/templates/embed.schema.ts) allowed to frame this page; default none. */
  frameAncestor?: string;
}

export function webApp(): WebApp {
  const root = webDist();
  const index = root ? readFileSync(join(root, 'index.html'), 'utf8') : undefined;
  if (!root || !index) return { middleware: (_ctx, next) => next() };

  function page(ctx: Context, noscript?: NoScriptLink, options: PageOptions = {}): void {
    const nonce = randomBytes(16).toString('base64');
    ctx.status = 200;
    ctx.set('Content-Security-Policy', pagePolicy(nonce, options.frameAncestor));
    // X-Frame-Options has no way to name one origin: a page that may be framed says nothing there
    // (security-headers.ts leaves a header a route set; browsers obey frame-ancestors over it anyway).
    if (options.frameAncestor) ctx.state.frameable = true;
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    const link = noscript ? ` <a href="${escapeHtml(noscript.href)}">${escapeHtml(noscript.text)}</a>` : '';
    ctx.body = index!.replaceAll(NONCE_PLACEHOLDER, nonce).replace(NOSCRIPT_PLACEHOLDER, link);
  }

  async function serveWebApp(ctx: Context, next: Next): Promise<void> {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.path === '/api' || ctx.path.startsWith('/api/')) return next();
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
    page(ctx);
  }
  return { middleware: serveWebApp, page };
}
