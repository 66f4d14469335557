import Joi from 'joi';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../domain/errors';
import { keyDenied, keyPermits } from '../middleware/guards';
import { validate } from '../validation';
import { documentTools } from './document-tools';
import { flowTools } from './flow-tools';
import { READ_ONLY, type McpTool, type ToolContext } from './mcp-tool';
import { failure, internalFailure, success } from './tool-results';

/**
 * The MCP server of one request (stateless Streamable HTTP: nothing is kept between requests, so
 * any replica answers any call). tools/list shows the tools the caller's flags admit, decided by
 * keyPermits as the REST guards decide; a call to a tool the flags do not admit is an error
 * result with ERR_AUTH_005, a call to a name that is no tool at all a JSON-RPC error.
 */

const whoami: McpTool = {
  name: 'whoami',
  title: 'Who am I',
  description: 'The project this credential acts on, its permission flags and the tools they open. Call it first.',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: {
    type: 'object',
    properties: {
      projectId: { type: 'string' },
      credential: { type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] },
      permissions: { type: 'object', additionalProperties: { type: 'boolean' } },
      tools: { type: 'array', items: { type: 'string' } },
    },
    required: ['projectId', 'credential', 'permissions', 'tools'],
  },
  annotations: READ_ONLY,
  access: { permission: true },
  args: Joi.object({}),
  run(ctx) {
    const { projectId, apiKeyId } = ctx.scope;
    return Promise.resolve({
      projectId,
      credential: { kind: ctx.credentialKind, ...(apiKeyId ? { apiKeyId } : {}) },
      permissions: ctx.permissions,
      tools: visibleTools(ctx).map((t) => t.name),
    });
  },
};

const TOOLS: McpTool[] = [whoami, ...flowTools, ...documentTools];
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

function visibleTools(ctx: ToolContext): McpTool[] {
  return TOOLS.filter((t) => keyPermits(ctx.permissions, t.access));
}

function describe(t: McpTool): Tool {
  return { name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: { title: t.title, ...t.annotations } };
}

export interface McpLogger {
  error(message: string, fields?: Record<string, unknown>): void;
}

async function callTool(ctx: ToolContext, tool: McpTool, args: unknown, logger: McpLogger): Promise<CallToolResult> {
  try {
    if (!keyPermits(ctx.permissions, tool.access)) throw keyDenied(ctx.permissions, tool.access);
    const input: unknown = validate(tool.args, args ?? {});
    return success(await tool.run(ctx, input));
  } catch (err) {
    if (err instanceof AppError) return failure(err);
    logger.error('mcp tool failed', { tool: tool.name, err });
    return internalFailure();
  }
}

export function createMcpServer(ctx: ToolContext, logger: McpLogger): Server {
  const server = new Server({ name: 'formwork', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: visibleTools(ctx).map(describe) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name} (tools/list shows the tools of this key)`);
    return callTool(ctx, tool, request.params.arguments, logger);
  });
  return server;
}
