import Router from '@koa/router';
import { AppError } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import { healthEndpoints } from './health.endpoints';

type Check = () => Promise<unknown>;

const FRESH_FOR_MS = 1000;

/**
 * Contract §1: 200 `{status: "ok", checks}` when every dependency answers, otherwise 503 (the spec
 * error body, with the same `checks` under relatedInfo so an operator sees which one failed). A
 * check is `"ok"` or `"error"`; why it failed is logged, never answered (docs/security.md, "Deployment").
 *
 * The dependencies are checked at most once a second, whatever the request rate: a result under a
 * second old is answered as it is; an older one (up to FRESH_FOR_MS × 10) is answered while a new
 * check runs behind it; past that, the request waits for a new check. Load balancers polling many
 * replicas then never add load to Postgres, Temporal and storage, and the endpoint's latency is the
 * API's own (what tests/hostile measures).
 */
export function healthRoutes(services: Services): Router {
  const checks: Record<string, Check> = {
    database: () => services.db.query('SELECT 1'),
    temporal: () => services.temporal.workflowService.getSystemInfo({}),
    storage: () => services.storage.check(),
  };
  if (services.redis) checks.redis = () => services.redis!.ping();

  const runChecks = async () => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), 3000);
          return [name, 'ok'] as const;
        } catch (err) {
          // The dependency's own message (host names, addresses, driver text) goes to the log only:
          // anyone may call this endpoint, so the answer says which dependency failed, not why.
          services.logger.warn('health check failed', { check: name, err });
          return [name, 'error'] as const;
        }
      }),
    );
    return { results, at: Date.now() };
  };
  let last: Awaited<ReturnType<typeof runChecks>> | undefined;
  let running: Promise<Awaited<ReturnType<typeof runChecks>>> | undefined;
  const refresh = () =>
    (running ??= runChecks()
      .then((r) => (last = r))
      .finally(() => (running = undefined)));

  const router = new Router();
  mount(router, healthEndpoints.health, async (ctx) => {
    const age = last ? Date.now() - last.at : Infinity;
    if (age > FRESH_FOR_MS) void refresh();
    const { results } = age <= FRESH_FOR_MS * 10 ? last! : await refresh();
    const report = Object.fromEntries(results);
    if (results.some(([, r]) => r !== 'ok')) throw new AppError('ERR_INTERNAL_002', 'A dependency is not ready', { checks: report });
    ctx.body = { status: 'ok', checks: report };
  });
  return router;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))),
  ]);
}
