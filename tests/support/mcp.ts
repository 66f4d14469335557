import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { TestApp } from './app';

/**
 * A transport that asks for an older protocol revision in `initialize`, as a client built on an
 * older SDK does (the SDK's own Client always asks for the newest). The server's answer decides the
 * revision the client then names in MCP-Protocol-Version.
 */
class PinnedRevisionTransport extends StreamableHTTPClientTransport {
  constructor(
    url: URL,
    options: StreamableHTTPClientTransportOptions,
    private readonly revision: string,
  ) {
    super(url, options);
  }

  override send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport['send']>[1]): Promise<void> {
    if ('method' in message && message.method === 'initialize') {
      message = { ...message, params: { ...message.params, protocolVersion: this.revision } };
    }
    return super.send(message, options);
  }
}

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

/** The SDK's Client over real HTTP to the test app's /mcp, with `Authorization: Bearer <key>`. */
export async function connectMcp(app: TestApp, key: string, opts: { revision?: string } = {}): Promise<McpConnection> {
  const url = new URL('/mcp', app.url);
  const options = { requestInit: { headers: { Authorization: `Bearer ${key}` } } };
  const transport = opts.revision ? new PinnedRevisionTransport(url, options, opts.revision) : new StreamableHTTPClientTransport(url, options);
  const client = new Client({ name: 'formwork-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** A tool's structured result; throws with the error text when the tool answered isError. */
export async function callOk(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** The parsed `{error}` of a tool's isError result. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError) throw new Error(`${name} did not fail: ${JSON.stringify(result.structuredContent)}`);
  const text = (result.content as Array<{ type: string; text: string }>)[0].text;
  return (JSON.parse(text) as { error: unknown }).error;
}
