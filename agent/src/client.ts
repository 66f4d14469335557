import type { Readable } from 'node:stream';
import { version } from '../package.json';
import type { LeasedTask } from './task';

/**
 * The agent protocol as the agent speaks it (docs/agent.md; docs/reporting.md "The agent protocol"): plain HTTPS
 * requests to /api/agents/me/* with the agent token as a bearer token. Every answer that is not 2xx becomes a
 * ProtocolError with the service's error code; a request that got no answer (DNS, refused, reset,
 * timed out) becomes a NetworkError, which the caller retries with backoff.
 */

export const AGENT_VERSION: string = version;

/** The service answered with an error body (`{code, message}`). */
export class ProtocolError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** A 429's or 503's Retry-After, in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** No answer came: the request can be tried again later. */
export class NetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetworkError';
  }
}

export interface SessionAnswer {
  agentId: string;
  /** `pending`: the service leases no task until an admin confirms the key's fingerprint. */
  keyStatus?: 'none' | 'pending' | 'confirmed';
  keyFingerprint?: string | null;
  projectId: string;
  sessionId: string;
  pollWaitSeconds: number;
  heartbeatIntervalSeconds: number;
  leaseSeconds: number;
  maxResultBytes: number;
}

export interface OpenSessionBody {
  version: string;
  hostname: string;
  platform: string;
  capabilities: string[];
  maxConcurrency: number;
  publicKey: string;
}

export interface PoolStats {
  datasourceId: string;
  size: number;
  max: number;
  idle: number;
  waiting: number;
  lastError?: string;
}

export interface HeartbeatBody {
  sessionId: string;
  running: string[];
  load: { running: number; capacity: number };
  pools: PoolStats[];
}

export interface TaskFailure {
  code: string;
  message: string;
  retryable: boolean;
  dbCode?: string;
}

const JSON_TIMEOUT_MS = 60_000;
/** An upload streams a result of up to maxResultBytes: it may take a while on a slow line. */
const UPLOAD_TIMEOUT_MS = 15 * 60_000;

export interface AgentClient {
  openSession(body: OpenSessionBody): Promise<SessionAnswer>;
  /** The next leased task, or null after `waitSeconds` without one. `signal` ends the long poll (shutdown). */
  nextTask(sessionId: string, waitSeconds: number, signal: AbortSignal): Promise<LeasedTask | null>;
  heartbeat(body: HeartbeatBody): Promise<{ cancel: string[] }>;
  uploadJson(taskId: string, sessionId: string, body: unknown): Promise<void>;
  /** `body` is the gzip-compressed NDJSON result. */
  uploadNdjson(taskId: string, sessionId: string, body: Readable): Promise<void>;
  fail(taskId: string, failure: TaskFailure): Promise<void>;
}

export function createClient(baseUrl: string, token: string): AgentClient {
  const base = baseUrl.replace(/\/+$/, '');

  async function call(method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string>; signal?: AbortSignal; timeoutMs?: number; stream?: boolean } = {}): Promise<Response> {
    const timeout = AbortSignal.timeout(init.timeoutMs ?? JSON_TIMEOUT_MS);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await fetch(`${base}/api/agents/me${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'user-agent': `formwork-agent/${AGENT_VERSION}`, accept: 'application/json', ...init.headers },
        body: init.body,
        signal,
        redirect: 'error',
        ...(init.stream ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new NetworkError(timeout.aborted ? `${method} ${path.split('?')[0]}: no answer in time` : `${method} ${path.split('?')[0]}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let code = `HTTP_${res.status}`;
    let message = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as { code?: unknown; message?: unknown };
      if (typeof parsed.code === 'string') code = parsed.code;
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      // Not the service's error body (a proxy's page): the status says enough.
    }
    const retryAfter = Number(res.headers.get('retry-after'));
    throw new ProtocolError(res.status, code, message, Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 300) * 1000 : undefined);
  }

  const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  return {
    async openSession(body) {
      return (await call('POST', '/sessions', json(body)).then((r) => r.json())) as SessionAnswer;
    },
    async nextTask(sessionId, waitSeconds, signal) {
      const res = await call('GET', `/tasks/next?sessionId=${encodeURIComponent(sessionId)}&wait=${waitSeconds}`, { signal, timeoutMs: (waitSeconds + 30) * 1000 });
      if (res.status === 204) return null;
      return (await res.json()) as LeasedTask;
    },
    async heartbeat(body) {
      const answer = (await call('POST', '/heartbeat', json(body)).then((r) => r.json())) as { cancel?: unknown };
      return { cancel: Array.isArray(answer.cancel) ? answer.cancel.filter((id): id is string => typeof id === 'string') : [] };
    },
    async uploadJson(taskId, sessionId, body) {
      await call('POST', `/tasks/${encodeURIComponent(taskId)}/result?sessionId=${encodeURIComponent(sessionId)}`, json(body)).then((r) => r.arrayBuffer());
    },
    async uploadNdjson(taskId, sessionId, body) {
      await call('POST', `/tasks/${encodeURIComponent(taskId)}/result?sessionId=${encodeURIComponent(sessionId)}`, {
        body: body as unknown as BodyInit,
        headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
        timeoutMs: UPLOAD_TIMEOUT_MS,
        stream: true,
      }).then((r) => r.arrayBuffer());
    },
    async fail(taskId, failure) {
      await call('POST', `/tasks/${encodeURIComponent(taskId)}/failure`, json(failure)).then((r) => r.arrayBuffer());
    },
  };
}
