import { ok } from '../openapi/operation';
import { operationsOf, routeTable } from '../openapi/route';

/** The health check's declaration (docs/architecture.md "One declaration per route"), mounted by health.routes.ts. */
const route = routeTable('Service');

export const healthEndpoints = {
  health: route('get', '/api/health', 'Health of the service and its dependencies', {
    description: 'No credential. 200 when every dependency answers; otherwise 500 ERR_INTERNAL_002 with the checks in `relatedInfo.checks`.',
    security: 'public',
    responses: {
      200: ok(
        'Everything answers',
        { type: 'object', required: ['status', 'checks'], properties: { status: { type: 'string', const: 'ok' }, checks: { type: 'object', additionalProperties: { type: 'string' } } } },
        { status: 'ok', checks: { database: 'ok', temporal: 'ok' } },
      ),
    },
  }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const healthOperations = operationsOf(healthEndpoints);
