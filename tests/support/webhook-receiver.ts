import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { waitFor } from './wait';

/**
 * A local webhook endpoint whose answers a test scripts (svix's TestReceiver): it records every
 * request with its headers and raw body, and answers each with the next scripted reply.
 */

export interface ReceivedRequest {
  method: string;
  path: string;
  /** Lower-case names, as node:http gives them. */
  headers: Record<string, string>;
  /** The body exactly as received: what a signature is checked against. */
  rawBody: string;
  json: any;
  receivedAt: Date;
}

/**
 * A status code, `{status, body?}`, `'reset'` (the socket is destroyed without an answer: a
 * network error for the sender) or `'hang'` (no answer until the receiver stops: a timeout).
 */
export type ScriptedReply = number | { status: number; body?: string; headers?: Record<string, string> } | 'reset' | 'hang';

/** A fallback that decides per request, e.g. by the requests received before it (`requests` includes this one). */
export type ReplyRule = (req: ReceivedRequest, requests: readonly ReceivedRequest[]) => ScriptedReply;

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:40123; any path is accepted. */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Replies for the next requests, in order; after them every request gets `fallback` (default 200). */
  respondWith(replies: ScriptedReply[], fallback?: ScriptedReply): void;
  /** Like respondWith, for requests to `path` only (several targets in flight at once); these win over the shared script. */
  respondOn(path: string, replies: ScriptedReply[], fallback?: ScriptedReply | ReplyRule): void;
  waitForRequests(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening (the port then refuses connections) and drops open connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  let script: ScriptedReply[] = [];
  let fallback: ScriptedReply = 200;
  const byPath = new Map<string, { script: ScriptedReply[]; fallback: ScriptedReply | ReplyRule }>();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(rawBody);
      } catch {
        json = undefined;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
      const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers, rawBody, json, receivedAt: new Date() };
      requests.push(received);
      const own = byPath.get(req.url ?? '');
      const scripted = own ? (own.script.length > 0 ? own.script.shift()! : own.fallback) : script.length > 0 ? script.shift()! : fallback;
      const reply = typeof scripted === 'function' ? scripted(received, requests) : scripted;
      if (reply === 'reset') return void req.socket.destroy();
      if (reply === 'hang') return;
      const { status, body, headers: extra } = typeof reply === 'number' ? { status: reply, body: undefined, headers: undefined } : reply;
      res.writeHead(status, { 'content-type': 'text/plain', ...extra });
      res.end(body ?? (status < 300 ? 'ok' : `error ${status}`));
    });
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(handle);
      s.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as AddressInfo).port;
        server = s;
        resolve();
      });
    });

  await listen();

  const receiver: WebhookReceiver = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    requests,
    respondWith(replies, otherwise = 200) {
      script = [...replies];
      fallback = otherwise;
    },
    respondOn(path, replies, otherwise = 200) {
      byPath.set(path, { script: [...replies], fallback: otherwise });
    },
    waitForRequests(n, timeoutMs = 15000) {
      return waitFor(() => (requests.length >= n ? requests.slice(0, n) : undefined), { timeoutMs, what: `${n} webhook request(s)` });
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async start() {
      if (!server) await listen();
    },
  };
  return receiver;
}
