import { ok, operationTable } from '../openapi/operation';

/** OpenAPI operation of the health check (api/health/health.routes.ts). */
export const healthOperations = operationTable('Service', (op) => [
  op('get', '/api/health', 'Health of the service and its dependencies', {
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
]);
