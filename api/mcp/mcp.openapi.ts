import { ok, operationTable } from '../openapi/operation';

const jsonRpc = { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { type: 'string', const: '2.0' }, id: { type: ['string', 'integer', 'null'] } }, additionalProperties: true };
const notStreamed = ok('Never: this stateless server has no stream or session; the answer is 405 with a JSON-RPC error', jsonRpc);

/** OpenAPI operations of the MCP endpoint (api/mcp/mcp.routes.ts; docs/mcp.md). */
export const mcpOperations = operationTable('MCP', (op) => [
  op('post', '/mcp', 'MCP over Streamable HTTP (stateless)', {
    description:
      'One JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, …). The client sends `Accept: application/json, text/event-stream` and, after initialize, `MCP-Protocol-Version`. Tools and their schemas: tools/list, or docs/mcp.md. A message is at most 1 MB + 64 KB (413 ERR_REQ_002).',
    security: 'project',
    request: { bodyDescription: 'A JSON-RPC 2.0 request, notification or response (MCP)', example: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
    responses: {
      200: ok('The JSON-RPC answer', jsonRpc, { jsonrpc: '2.0', id: 1, result: { tools: [] } }),
      202: { description: 'A notification or response was accepted; no body', contentType: 'none' },
    },
  }),
  op('get', '/mcp', 'Server-to-client stream (not offered)', { security: 'project', responses: { 405: notStreamed } }),
  op('delete', '/mcp', 'End a session (not offered: stateless)', { security: 'project', responses: { 405: notStreamed } }),
]);
