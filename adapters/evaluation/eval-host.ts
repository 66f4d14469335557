import { fork, type ChildProcess } from 'node:child_process';
import type { CheckArgs, CheckName, CheckResult } from '../../domain/checks';
import { AppError, type ErrorCode } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import { threadFile } from '../threads';
import type { EvalPoolOptions, PackedEvaluator } from './eval-pool';
import { pack, unpack, type Packed } from './eval-task';

/** A call to the evaluation host (eval-host-main.ts) and its answer. */
type HostRequest =
  | { op: 'validate'; req: Parameters<PackedEvaluator['validate']>[0] }
  | { op: 'calculate'; req: Parameters<PackedEvaluator['calculate']>[0] }
  | { op: 'check'; tenant: string; name: CheckName; args: Packed<unknown[]> };

export type HostCall = HostRequest & { id: number };

export type HostReply =
  | { id: number; ok: true; value: Packed<unknown> }
  | { id: number; ok: false; error: { code?: string; message: string; relatedInfo?: Record<string, unknown> } };

class HostExited extends Error {}

/** How long close() waits for the host to stop its workers before it is killed. */
const CLOSE_WAIT_MS = 3000;

/**
 * The evaluator of a service process: the evaluation pool (eval-pool.ts) runs in a small process of
 * its own, the evaluation host, and this side only sends it calls. Starting a worker process means a
 * fork(), which stops the forking thread for as long as the kernel copies its memory map: from the
 * API, with its large heap and on a busy machine, tens to hundreds of milliseconds per replacement
 * of a killed worker, during which no HTTP request is served. The host's heap is small and nothing
 * waits on its thread. Evaluations are pure: a call that was under way when the host died is sent
 * once more to its replacement.
 */
export function createEvalHost(options: EvalPoolOptions): Evaluator {
  let host: ChildProcess | undefined;
  let closed = false;
  let nextId = 1;
  const pending = new Map<number, { host: ChildProcess; resolve(value: Packed<unknown>): void; reject(err: Error): void }>();

  function start(): ChildProcess {
    const child = fork(threadFile('evaluation/eval-host-main'), [JSON.stringify(options)], {
      // Structured clone rather than JSON: template data keeps its Date values.
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (reply: HostReply) => {
      const call = pending.get(reply.id);
      if (!call) return;
      pending.delete(reply.id);
      if (reply.ok) call.resolve(reply.value);
      else call.reject(reply.error.code ? new AppError(reply.error.code as ErrorCode, reply.error.message, reply.error.relatedInfo) : new Error(reply.error.message));
    });
    child.on('exit', (code, signal) => {
      if (host === child) host = undefined;
      for (const [id, call] of pending) {
        if (call.host !== child) continue;
        pending.delete(id);
        call.reject(new HostExited(`evaluation host exited (${signal ?? code})`));
      }
    });
    // A failed send also ends in 'exit'; without a listener it would be thrown.
    child.on('error', () => undefined);
    return child;
  }

  function send(call: HostRequest): Promise<Packed<unknown>> {
    if (closed) return Promise.reject(new Error('the evaluator is closed'));
    host ??= start();
    const target = host;
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { host: target, resolve, reject });
      target.send({ ...call, id } as HostCall, (err) => {
        if (!err || !pending.has(id)) return;
        pending.delete(id);
        reject(new HostExited(err.message));
      });
    });
  }

  /** Once more after the host died under the call (it is replaced on the next send). */
  async function call<T>(message: HostRequest): Promise<T> {
    try {
      return unpack((await send(message)) as Packed<T>);
    } catch (err) {
      if (err instanceof HostExited && !closed) return unpack((await send(message)) as Packed<T>);
      throw err;
    }
  }

  return {
    validate: (req) => call({ op: 'validate', req: { ...req, payload: pack(req.payload) } }),
    calculate: (req) => call({ op: 'calculate', req: { ...req, scope: pack(req.scope) } }),
    check<N extends CheckName>(tenant: string, name: N, ...args: CheckArgs<N>): Promise<CheckResult<N>> {
      return call({ op: 'check', tenant, name, args: pack(args) });
    },
    async close() {
      closed = true;
      const child = host;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // Disconnecting tells the host to close its pool (which ends its workers) and exit.
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_WAIT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
