import type { KeyObject } from 'node:crypto';
import { hostname, platform } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { AGENT_VERSION, NetworkError, ProtocolError, type AgentClient, type SessionAnswer, type TaskFailure } from './client';
import { AgentExit } from './exit';
import { executeTask, failureOf, type TaskOutcome } from './execute';
import type { Log } from './log';
import { DatasourcePools } from './pools';
import { DATASOURCE_KINDS, type LeasedTask } from './task';

export interface AgentOptions {
  client: AgentClient;
  log: Log;
  privateKey: KeyObject;
  publicKeyPem: string;
  maxConcurrency: number;
  shutdownGraceMs: number;
}

/** Why a running task was stopped: the service cancelled it, the agent is shutting down, or the agent cannot go on. */
type StopReason = 'cancel' | 'shutdown' | 'fatal';

class TaskStop extends Error {
  constructor(readonly reason: StopReason) {
    super(`task stopped: ${reason}`);
  }
}

interface Running {
  task: LeasedTask;
  controller: AbortController;
  done: Promise<void>;
}

const BACKOFF_START_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** Failures of the protocol that a wait can fix (a restarting service, a proxy, the rate limit). */
const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
const UPLOAD_ATTEMPTS = 3;
const MIN_EMPTY_POLL_MS = 1000;

/**
 * The agent (docs/agent.md): opens a session, long-polls for tasks while it has room for more, runs
 * each with a runner, uploads the result or reports the failure, and heartbeats its running tasks
 * (which renews their leases and tells it which to cancel). `run` resolves with the exit code.
 */
export class Agent {
  private session: SessionAnswer | null = null;
  private readonly running = new Map<string, Running>();
  private readonly pools = new DatasourcePools();
  private stopping = false;
  private fatal: AgentExit | null = null;
  private readonly stopPolling = new AbortController();
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private slotFreed: (() => void) | null = null;
  private backoffMs = BACKOFF_START_MS;

  constructor(private readonly opts: AgentOptions) {}

  /** SIGTERM/SIGINT: stop polling, let running tasks finish for the grace period, then stop them. */
  shutdown(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.opts.log.info('shutdown_started', { running: this.running.size, graceSeconds: this.opts.shutdownGraceMs / 1000 });
    this.stopPolling.abort(new TaskStop('shutdown'));
    this.wakeLoop();
  }

  private die(err: AgentExit): void {
    if (this.fatal) return;
    this.fatal = err;
    this.stopping = true;
    this.stopPolling.abort(new TaskStop('fatal'));
    for (const r of this.running.values()) r.controller.abort(new TaskStop('fatal'));
    this.wakeLoop();
  }

  async run(): Promise<number> {
    try {
      await this.pollLoop();
    } catch (err) {
      if (err instanceof AgentExit) this.die(err);
      else throw err;
    }
    await this.drain();
    this.stopHeartbeat();
    if (this.fatal) {
      this.opts.log.error('agent_stopped', { message: this.fatal.message });
      return 1;
    }
    this.opts.log.info('agent_stopped', {});
    return 0;
  }

  private async pollLoop(): Promise<void> {
    while (!this.stopping) {
      if (!this.session) {
        await this.openSession();
        continue;
      }
      if (this.running.size >= this.opts.maxConcurrency) {
        await new Promise<void>((resolve) => {
          this.slotFreed = resolve;
        });
        continue;
      }
      const session = this.session;
      const asked = Date.now();
      let task: LeasedTask | null;
      try {
        task = await this.opts.client.nextTask(session.sessionId, session.pollWaitSeconds, this.stopPolling.signal);
        this.backoffMs = BACKOFF_START_MS;
      } catch (err) {
        if (this.stopping) return;
        await this.onProtocolError(err, 'poll');
        continue;
      }
      if (task && this.stopping) {
        // Leased while the shutdown began: handed back at once, for another attempt.
        await this.send(task, () => this.opts.client.fail(task.taskId, { code: 'AGENT_SHUTDOWN', message: 'The agent is shutting down', retryable: true }));
      } else if (task) {
        this.start(task, session);
      } else if (Date.now() - asked < MIN_EMPTY_POLL_MS) {
        // An empty answer that did not wait (a short pollWaitSeconds): no tight loop against the rate limit.
        await sleep(MIN_EMPTY_POLL_MS, undefined, { signal: this.stopPolling.signal }).catch(() => undefined);
      }
    }
  }

  private wakeLoop(): void {
    const wake = this.slotFreed;
    this.slotFreed = null;
    wake?.();
  }

  private async openSession(): Promise<void> {
    try {
      const session = await this.opts.client.openSession({
        version: AGENT_VERSION,
        hostname: hostname().slice(0, 255) || 'unknown',
        platform: `${platform()}`.slice(0, 50),
        capabilities: [...DATASOURCE_KINDS],
        maxConcurrency: this.opts.maxConcurrency,
        publicKey: this.opts.publicKeyPem,
      });
      this.session = session;
      this.backoffMs = BACKOFF_START_MS;
      this.opts.log.info('session_opened', { agentId: session.agentId, sessionId: session.sessionId, pollWaitSeconds: session.pollWaitSeconds, heartbeatIntervalSeconds: session.heartbeatIntervalSeconds });
      if (session.keyStatus === 'pending') {
        // Tasks wait until then (docs/agent.md "Confirming the key").
        this.opts.log.warn('key_awaits_confirmation', { keyFingerprint: session.keyFingerprint, message: 'An admin must confirm this fingerprint (Agents, Confirm key) before the agent receives tasks' });
      }
      this.startHeartbeat(session);
    } catch (err) {
      if (err instanceof ProtocolError && err.code === 'ERR_AGENT_010') {
        throw new AgentExit(
          'The service already holds a different public key for this agent (ERR_AGENT_010): this key file is not the one the agent registered with. Use the original key file, or have an admin reset the agent (sealed datasource secrets must then be entered again).',
        );
      }
      await this.onProtocolError(err, 'session');
    }
  }

  /** 401 ends the agent; a replaced session opens a new one; transient failures wait (1 s doubling to 30 s). */
  private async onProtocolError(err: unknown, during: string): Promise<void> {
    if (err instanceof ProtocolError) {
      if (err.status === 401) {
        throw new AgentExit(`The service refused the agent token (${err.code}: ${err.message}). The token was rotated or the agent deactivated.`);
      }
      if (err.code === 'ERR_AGENT_011') {
        this.opts.log.warn('session_replaced', { during });
        this.session = null;
        this.stopHeartbeat();
        return;
      }
      if (!TRANSIENT_STATUS.has(err.status)) {
        this.opts.log.error('request_refused', { during, status: err.status, code: err.code, message: err.message });
      } else {
        // The rate limit (429) and a restarting service say how long to wait; the backoff is the floor.
        if (err.retryAfterMs) this.backoffMs = Math.max(this.backoffMs, err.retryAfterMs);
        this.opts.log.warn('service_unavailable', { during, status: err.status, code: err.code, retryInMs: this.backoffMs });
      }
    } else if (err instanceof NetworkError) {
      this.opts.log.warn('network_error', { during, message: err.message, retryInMs: this.backoffMs });
    } else if (err instanceof AgentExit) {
      throw err;
    } else {
      this.opts.log.error('unexpected_error', { during, message: err instanceof Error ? err.message : String(err), retryInMs: this.backoffMs });
    }
    await this.pause();
  }

  private async pause(): Promise<void> {
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    await sleep(wait, undefined, { signal: this.stopPolling.signal }).catch(() => undefined);
  }

  private startHeartbeat(session: SessionAnswer): void {
    this.stopHeartbeat();
    const every = Math.max(1, session.heartbeatIntervalSeconds) * 1000;
    const beat = () => {
      void this.heartbeat(session).finally(() => {
        if (this.session === session && this.heartbeatTimer) this.heartbeatTimer = setTimeout(beat, every);
      });
    };
    this.heartbeatTimer = setTimeout(beat, every);
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  /** Renews the running tasks' leases; every task the answer names is stopped and reported CANCELLED. */
  private async heartbeat(session: SessionAnswer): Promise<void> {
    const running = [...this.running.keys()];
    try {
      const answer = await this.opts.client.heartbeat({
        sessionId: session.sessionId,
        running,
        load: { running: running.length, capacity: this.opts.maxConcurrency },
        pools: this.pools.stats(),
      });
      for (const id of answer.cancel) {
        const r = this.running.get(id);
        if (r && !r.controller.signal.aborted) {
          this.opts.log.info('task_cancel_requested', { taskId: id });
          r.controller.abort(new TaskStop('cancel'));
        }
      }
    } catch (err) {
      if (err instanceof ProtocolError && err.status === 401) {
        this.die(new AgentExit(`The service refused the agent token (${err.code}: ${err.message}). The token was rotated or the agent deactivated.`));
      } else if (err instanceof ProtocolError && err.code === 'ERR_AGENT_011') {
        // The poll loop learns it too and opens a new session; this session's tasks cannot report any more.
        this.opts.log.warn('session_replaced', { during: 'heartbeat' });
      } else {
        this.opts.log.warn('heartbeat_failed', { message: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  private start(task: LeasedTask, session: SessionAnswer): void {
    const controller = new AbortController();
    const entry: Running = { task, controller, done: Promise.resolve() };
    this.running.set(task.taskId, entry);
    this.opts.log.info('task_leased', { taskId: task.taskId, kind: task.kind, attempt: task.attempt, datasourceId: task.datasource?.id, datasourceKind: task.datasource?.kind });
    entry.done = this.perform(task, session, controller.signal)
      .catch((err: unknown) => {
        this.opts.log.error('task_error', { taskId: task.taskId, message: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => {
        this.running.delete(task.taskId);
        this.wakeLoop();
      });
  }

  private async perform(task: LeasedTask, session: SessionAnswer, signal: AbortSignal): Promise<void> {
    const started = Date.now();
    const dsId = task.datasource?.id ?? 'unknown';
    let release: (() => void) | undefined;
    let outcome: TaskOutcome | undefined;
    try {
      release = await this.pools.acquire(dsId, task.datasource?.pool?.max ?? this.opts.maxConcurrency, signal);
      outcome = await executeTask(task, { projectId: session.projectId, privateKey: this.opts.privateKey, maxResultBytes: session.maxResultBytes, signal });
      release();
      release = undefined;
      this.pools.recordError(dsId, undefined);
      const done = outcome;
      // Each attempt of a query result reads the result file again.
      const sent = await this.send(task, () =>
        done.kind === 'json' ? this.opts.client.uploadJson(task.taskId, session.sessionId, done.body) : this.opts.client.uploadNdjson(task.taskId, session.sessionId, done.file.upload(done.summary)),
      );
      if (sent instanceof ProtocolError) {
        // The service refused the result itself (too large, malformed): the task fails with that answer.
        const failure: TaskFailure = { code: sent.code.slice(0, 64), message: sent.message.slice(0, 2000), retryable: false };
        this.opts.log.warn('task_failed', { taskId: task.taskId, kind: task.kind, code: failure.code, message: failure.message, retryable: false, durationMs: Date.now() - started });
        await this.send(task, () => this.opts.client.fail(task.taskId, failure));
      } else if (sent === 'sent') {
        this.opts.log.info('task_done', { taskId: task.taskId, kind: task.kind, durationMs: Date.now() - started, ...(done.kind === 'rows' ? { rowCount: done.summary.rowCount, truncated: done.summary.truncated } : {}) });
      }
    } catch (err) {
      release?.();
      const stop = signal.aborted && signal.reason instanceof TaskStop ? signal.reason.reason : null;
      if (stop === 'fatal') return;
      const failure: TaskFailure =
        stop === 'cancel'
          ? { code: 'CANCELLED', message: 'Cancelled by the service', retryable: false }
          : stop === 'shutdown'
            ? { code: 'AGENT_SHUTDOWN', message: 'The agent shut down before the task finished', retryable: true }
            : failureOf(err);
      if (!stop) this.pools.recordError(dsId, failure.message);
      this.opts.log.warn('task_failed', { taskId: task.taskId, kind: task.kind, code: failure.code, message: failure.message, retryable: failure.retryable, durationMs: Date.now() - started });
      await this.send(task, () => this.opts.client.fail(task.taskId, failure));
    } finally {
      if (outcome?.kind === 'rows') await outcome.file.dispose();
    }
  }

  /**
   * Sends a result or a failure, trying again after a network error or a transient answer. A 409
   * or 410 (the lease was lost: expired, cancelled, another session) drops it: the service has
   * given the task to someone else or ended it.
   */
  private async send(task: LeasedTask, request: () => Promise<void>): Promise<'sent' | 'dropped' | ProtocolError> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await request();
        return 'sent';
      } catch (err) {
        if (err instanceof ProtocolError && (err.status === 409 || err.status === 410)) {
          this.opts.log.warn('result_dropped', { taskId: task.taskId, status: err.status, code: err.code, message: err.message });
          return 'dropped';
        }
        if (err instanceof ProtocolError && err.status === 401) {
          this.die(new AgentExit(`The service refused the agent token (${err.code}: ${err.message}). The token was rotated or the agent deactivated.`));
          return 'dropped';
        }
        const transient = err instanceof NetworkError || (err instanceof ProtocolError && TRANSIENT_STATUS.has(err.status));
        if (!transient || attempt >= UPLOAD_ATTEMPTS || this.fatal) {
          this.opts.log.error('send_failed', { taskId: task.taskId, status: err instanceof ProtocolError ? err.status : undefined, message: err instanceof Error ? err.message : String(err) });
          return err instanceof ProtocolError && !transient ? err : 'dropped';
        }
        await sleep(Math.max(BACKOFF_START_MS * 2 ** (attempt - 1), err instanceof ProtocolError ? (err.retryAfterMs ?? 0) : 0));
      }
    }
  }

  /** After polling stopped: the grace period for running tasks, then stop the rest and wait for their reports. */
  private async drain(): Promise<void> {
    if (this.running.size > 0 && !this.fatal) {
      const all = Promise.all([...this.running.values()].map((r) => r.done));
      const graceOver = sleep(this.opts.shutdownGraceMs, 'grace_over' as const, { ref: false });
      if ((await Promise.race([all.then(() => 'done' as const), graceOver])) === 'grace_over') {
        this.opts.log.warn('shutdown_grace_over', { stopping: [...this.running.keys()] });
        for (const r of this.running.values()) r.controller.abort(new TaskStop('shutdown'));
      }
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
  }
}
