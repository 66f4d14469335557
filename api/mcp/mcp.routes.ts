import Router from '@koa/router';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../domain/errors';
import type { ApiKeyPermissions } from '../../domain/identity/api-keys';
import type { Principal } from '../../domain/identity/principal';
import { jsonDepthExceeds, MAX_JSON_DEPTH, tooDeep } from '../../domain/json-body';
import type { Services } from '../../platform/services';
import type { FlowApiDeps } from '../flow/flow-api';
import { MAX_PAYLOAD_BYTES } from '../flow/submissions.service';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { mcpEndpoints as routes } from './mcp.endpoints';
import { createMcpServer } from './mcp-server';

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless (no session id; every request
 * builds its server from the credential it carries, so any replica answers it). The protocol
 * revision is negotiated per request by the SDK: initialize answers the client's revision when
 * the SDK supports it (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05), later requests name it in
 * `MCP-Protocol-Version`. Answers are JSON, not SSE streams: nothing is sent before the result.
 * GET (a server-to-client stream) and DELETE (ending a session) have nothing to do without
 * sessions and answer 405, as the transport specification allows. docs/mcp.md.
 *
 * Mounted before the app's body parser: the message is read here (readMessage).
 *
 * Access: any API key of the project (or a credential held to the same rules) opens the
 * endpoint; each tool then needs what its REST route needs. No credential is 401 with the
 * spec's error body; a user session (JWT) is 403: MCP clients are configured with a key.
 */

/** A message around a 1 MB payload: the payload limit of Flow submissions, plus room for the JSON-RPC envelope. */
const MAX_MESSAGE_BYTES = MAX_PAYLOAD_BYTES + 64 * 1024;

/**
 * The JSON-RPC message, read within MAX_MESSAGE_BYTES (413 ERR_REQ_002 past it, before it is
 * all read) and no deeper than the rest of the API allows (400 ERR_REQ_005). Text that is not
 * JSON is left to the transport, which answers JSON-RPC's parse error.
 */
async function readMessage(ctx: Context): Promise<{ parsed: unknown } | { raw: string }> {
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: MAX_MESSAGE_BYTES, length: ctx.get('Content-Length') || undefined, encoding: 'utf8' });
  } catch (err) {
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large' || e.status === 413) {
      throw new AppError('ERR_REQ_002', `An MCP message is at most ${MAX_MESSAGE_BYTES} bytes (a tool argument at most ${MAX_PAYLOAD_BYTES} bytes): send a smaller payload`, { limit: MAX_MESSAGE_BYTES });
    }
    throw err;
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return { parsed: JSON.parse(text) as unknown };
  } catch {
    return { raw: text };
  }
}

function jsonRpcError(ctx: Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

function permissionsOf(p: Principal): ApiKeyPermissions {
  // Every principal a key guard admits carries its flags (API keys; OAuth access tokens).
  return (p as { permissions: ApiKeyPermissions }).permissions;
}

export function mcpRoutes(services: Services, flow: FlowApiDeps): Router {
  const router = new Router();
  const anyKey = requireProject(services.db, { permission: true });

  mount(router, routes.message, anyKey, async (ctx) => {
    const message = await readMessage(ctx);
    if ('raw' in message) return jsonRpcError(ctx, 400, -32700, 'Parse error: the body is not JSON');
    const principal = ctx.state.principal as Principal;
    const server = createMcpServer(
      { scope: ctx.state.scope as Scope, credentialKind: principal.kind, permissions: permissionsOf(principal), services, flow },
      services.logger,
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    // The transport writes the answer itself; headers set so far (request id, rate limit, security) go with it.
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(ctx.req, ctx.res, message.parsed);
  });

  const noStream = (ctx: Context) => {
    ctx.set('Allow', 'POST');
    jsonRpcError(ctx, 405, -32000, 'Method not allowed: this MCP server is stateless and answers POST only');
  };
  mount(router, routes.stream, anyKey, noStream);
  mount(router, routes.endSession, anyKey, noStream);
  return router;
}
