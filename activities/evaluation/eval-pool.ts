import workerpool from 'workerpool';
import type { CheckArgs, CheckName, CheckResult } from '../../domain/checks';
import { AppError, type ErrorCode } from '../../domain/errors';
import type { CalculateRequest, Evaluator, ValidateRequest } from '../../domain/evaluation';
import { FairScheduler } from '../../domain/fair-scheduler';
import { interruptedOutcome } from '../../domain/flow/engine';
import { budgetMessage } from '../../domain/flow/rules';
import { calculatedBudgetMessage } from '../../domain/templates/variables';
import { threadFile } from '../threads';
import { STARTED, type EvalProgress, type EvalResult, type EvalWork } from './eval-task';

export interface EvalPoolOptions {
  /** Worker processes (EVAL_POOL_SIZE). */
  poolSize: number;
  /** Budget of one request (EVAL_TIMEOUT_MS). */
  timeoutMs: number;
  /** Heap limit of each worker process (EVAL_MAX_HEAP_MB). */
  maxHeapMb: number;
}

/**
 * Time a worker gets past its budget before it is killed. The worker stops cooperatively at the
 * budget (JSONata checks the clock at every step); this only ends what cannot be interrupted, such
 * as one enormous string operation.
 */
const KILL_GRACE_MS = 100;

/** How long a task may wait for a worker to load its code and start it (a safety net, not a budget). */
const START_TIMEOUT_MS = 30_000;

/**
 * The evaluation pool (domain/evaluation.ts): worker *processes* (workerpool), each with its own
 * heap limit, behind a fair scheduler (one tenant cannot occupy every worker), with a kill timer
 * per task that starts when a worker takes it. Processes rather than threads: a worker thread's
 * `resourceLimits` does not survive one allocation larger than the limit (V8 aborts the whole
 * process: `$uppercase($pad("", 200000000))` brought the API down in a thread), while a child
 * process that runs out of heap dies alone. A killed or crashed worker is replaced by workerpool;
 * the caller still gets a precise answer, rebuilt from the progress the worker reported.
 */
export function createEvalPool(options: EvalPoolOptions): Evaluator {
  const pool = workerpool.pool(threadFile('evaluation/eval-worker'), {
    workerType: 'process',
    minWorkers: options.poolSize,
    maxWorkers: options.poolSize,
    maxQueueSize: Infinity,
    // The V8 report of a worker that ran out of heap goes to our log, not to the service's stderr.
    emitStdStreams: true,
    forkOpts: {
      execArgv: [`--max-old-space-size=${options.maxHeapMb}`, '--max-semi-space-size=8', '--stack-size=2000'],
    },
    workerTerminateTimeout: 1000,
  });
  const scheduler = new FairScheduler(options.poolSize);
  const budgetMs = options.timeoutMs;

  type Interrupted = { interrupted: true; memory: boolean; progress: EvalProgress[] };

  /** Runs a task in a worker; resolves to the worker's result or to how it was interrupted. */
  function dispatch(tenant: string, work: EvalWork): Promise<EvalResult | Interrupted> {
    return scheduler.submit(tenant, async () => {
      const progress: EvalProgress[] = [];
      let killTimer: NodeJS.Timeout | undefined;
      // The budget counts from the moment the worker starts the task (its first report), not from
      // dispatch: a worker that replaces a killed one first has to load its code.
      const task = pool.exec('evaluate', [{ ...work, budgetMs }], {
        on: (p: EvalProgress) => {
          if (p.at === STARTED && progress.length === 0) killTimer = setTimeout(() => task.cancel(), budgetMs + KILL_GRACE_MS);
          progress.push(p);
        },
      });
      try {
        return (await task.timeout(budgetMs + START_TIMEOUT_MS)) as EvalResult;
      } catch (err) {
        if (err instanceof workerpool.Promise.CancellationError || err instanceof workerpool.Promise.TimeoutError) {
          return { interrupted: true, memory: false, progress };
        }
        if (/terminated unexpectedly/i.test(String((err as Error).message))) return { interrupted: true, memory: true, progress };
        throw err;
      } finally {
        clearTimeout(killTimer);
      }
    });
  }

  const limitReason = (memory: boolean) => (memory ? `evaluation memory limit exceeded (${options.maxHeapMb} MB)` : budgetMessage(budgetMs));
  const failure = (error: { code: string; message: string; relatedInfo?: Record<string, unknown> }) =>
    new AppError(error.code as ErrorCode, error.message, error.relatedInfo);

  return {
    async validate(req: ValidateRequest) {
      const start = performance.now();
      const { tenant, gateId, version, definition, payload } = req;
      const result = await dispatch(tenant, { kind: 'validate', gateId, version, definition, payload });
      if ('interrupted' in result) {
        return interruptedOutcome(definition, result.progress, limitReason(result.memory), Math.round(performance.now() - start));
      }
      if (!result.ok) throw failure(result.error);
      if (!('outcome' in result)) throw new Error('evaluation worker answered a validation without an outcome');
      return result.outcome;
    },

    async calculate(req: CalculateRequest) {
      const { tenant, calculated, scope } = req;
      const result = await dispatch(tenant, { kind: 'calculate', calculated, scope });
      if ('interrupted' in result) {
        const at = result.progress.reduce((max, p) => Math.max(max, p.at), 0);
        const name = calculated[at]?.name ?? calculated[0].name;
        const message = result.memory ? `Calculated variable '${name}' exceeded the evaluation memory limit (${options.maxHeapMb} MB)` : calculatedBudgetMessage(name, budgetMs);
        throw new AppError('ERR_LIMIT_008', message, { field: name, limitMs: budgetMs });
      }
      if (!result.ok) throw failure(result.error);
      if (!('values' in result)) throw new Error('evaluation worker answered a calculation without values');
      return result.values;
    },

    async check<N extends CheckName>(tenant: string, name: N, ...args: CheckArgs<N>): Promise<CheckResult<N>> {
      const result = await dispatch(tenant, { kind: 'check', name, args });
      if ('interrupted' in result) {
        const message = result.memory
          ? `The definition could not be checked within the evaluation memory limit (${options.maxHeapMb} MB)`
          : `The definition could not be checked within the evaluation budget (${budgetMs} ms)`;
        throw new AppError('ERR_LIMIT_008', message, { check: name, limitMs: budgetMs });
      }
      if (!result.ok) throw failure(result.error);
      if (!('checked' in result)) throw new Error('evaluation worker answered a check without a result');
      return result.checked as CheckResult<N>;
    },

    async close() {
      await pool.terminate(true);
    },
  };
}
