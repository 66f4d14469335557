import type { Context, Next } from 'koa';
import { observeHttpRequest } from '../../platform/metrics';

/**
 * Times every request for `formwork_http_request_duration_seconds` (platform/metrics.ts), labelled by
 * the route's template (`/api/documents/jobs/:jobId`, never the path a client sent) and the status
 * the client got. Mounted right after the request id, so errors rendered further in count with their status.
 */
export async function httpMetrics(ctx: Context, next: Next): Promise<void> {
  const started = process.hrtime.bigint();
  let status = 500;
  try {
    await next();
    status = ctx.status;
  } finally {
    const route = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
    observeHttpRequest(ctx.method, typeof route === 'string' ? route : undefined, status, Number(process.hrtime.bigint() - started) / 1e9);
  }
}
