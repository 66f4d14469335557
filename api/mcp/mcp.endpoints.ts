import { ok } from '../openapi/operation';
import { operationsOf, routeTable } from '../openapi/route';

/**
 * The MCP endpoint's declarations (docs/architecture.md "One declaration per route"; docs/mcp.md),
 * mounted by mcp.routes.ts. The POST body is a JSON-RPC message the handler reads itself (before the
 * app's body parser): no body schema.
 */
const route = routeTable('MCP');
const jsonRpc = { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { type: 'string', const: '2.0' }, id: { type: ['string', 'integer', 'null'] } }, additionalProperties: true };
const notStreamed = ok('Never: this stateless server has no stream or session; the answer is 405 with a JSON-RPC error', jsonRpc);

export const mcpEndpoints = {
  message: route('post', '/mcp', 'MCP over Streamable HTTP (stateless)', {
    description:
      'One JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, …). The client sends `Accept: application/json, text/event-stream` and, after initialize, `MCP-Protocol-Version`. Tools and their schemas: tools/list, or docs/mcp.md. A message is at most 1 MB + 64 KB (413 ERR_REQ_002).',
    security: 'project',
    request: { bodyDescription: 'A JSON-RPC 2.0 request, notification or response (MCP)', example: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
    responses: {
      200: ok('The JSON-RPC answer', jsonRpc, { jsonrpc: '2.0', id: 1, result: { tools: [] } }),
      202: { description: 'A notification or response was accepted; no body', contentType: 'none' },
    },
  }),
  stream: route('get', '/mcp', 'Server-to-client stream (not offered)', { security: 'project', responses: { 405: notStreamed } }),
  endSession: route('delete', '/mcp', 'End a session (not offered: stateless)', { security: 'project', responses: { 405: notStreamed } }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const mcpOperations = operationsOf(mcpEndpoints);
