import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import workerpool from 'workerpool';
import { BUDGETED_CHECKS, type CheckName } from '../../domain/checks';
import { AppError, type ErrorCode } from '../../domain/errors';
import type { CalculateRequest, ValidateRequest } from '../../domain/evaluation';
import type { ValidationOutcome } from '../../domain/flow/gate.types';
import { FairScheduler } from '../../domain/fair-scheduler';
import { interruptedOutcome } from '../../domain/flow/engine';
import { budgetMessage } from '../../domain/flow/rules';
import { calculatedBudgetMessage } from '../../domain/templates/variables';
import { threadFile } from '../threads';
import { watchCpu, type CpuWatch } from './cpu-watch';
import { pack, STARTED, type EvalProgress, type EvalResult, type EvalWork, type Packed } from './eval-task';
import { processPool } from './process-pool';

export interface EvalPoolOptions {
  /** Worker processes (EVAL_POOL_SIZE). */
  poolSize: number;
  /** Budget of one request (EVAL_TIMEOUT_MS). */
  timeoutMs: number;
  /** Heap limit of each worker process (EVAL_MAX_HEAP_MB). */
  maxHeapMb: number;
}

/**
 * CPU time a worker gets past its budget before it is killed. The worker stops cooperatively at the
 * budget (JSONata checks the CPU clock at every step, domain/cpu-budget.ts); this only ends what
 * cannot be interrupted, such as one enormous string operation.
 */
const KILL_GRACE_MS = 250;

/**
 * Interactive budgets count CPU time, so a task whose worker waits for a core on a loaded machine is
 * not failed for the wait; this much wall-clock time ends it anyway, as a budget overrun. It is
 * kept short: a runaway task of a project not yet known to be expensive holds an interactive
 * worker (demoted to nice 19, it gets little CPU) until it ends, and every interactive worker it
 * holds is one honest requests wait for (bench:hostile).
 */
const WALL_BACKSTOP_FACTOR = 30;
const wallBackstopMs = (budgetMs: number) => Math.max(30_000, budgetMs * WALL_BACKSTOP_FACTOR);

/**
 * Priorities: every worker runs at WORKER_NICE (below HTTP and Temporal polling); a task still
 * running after DEMOTE_AFTER_MS is moved to DEMOTED_NICE, so an expensive evaluation takes CPU only
 * from what nobody else needs, and quick ones (every honest validation) keep theirs. Moving it back
 * when the task ends needs CAP_SYS_NICE where RLIMIT_NICE does not allow it; without it the worker
 * stays at DEMOTED_NICE until it is replaced. Tenants known to be expensive do not use these
 * workers at all: see Lane below.
 */
const WORKER_NICE = 10;
const DEMOTED_NICE = 19;
const DEMOTE_AFTER_MS = 50;

function renice(pid: number, nice: number): boolean {
  try {
    setPriority(pid, nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * A worker process is started through nice(1) where the system has it, so that it boots (node's own
 * start and our code, ~50 ms of CPU) already below HTTP and Temporal polling: a killed worker's
 * replacement must not compete with them. Elsewhere lower-priority.ts lowers it once it runs.
 */
const NICE_BIN = ['/usr/bin/nice', '/bin/nice'].find((path) => existsSync(path));
/** chrt(1) (util-linux) starts the background lane's workers under SCHED_IDLE where the system has it. */
const CHRT_BIN = ['/usr/bin/chrt', '/bin/chrt'].find((path) => existsSync(path));

/**
 * The two lanes of the pool. `interactive`: every tenant's work while it is cheap (nice 10, a task
 * past DEMOTE_AFTER_MS moved to 19). `background`: the work of tenants whose recent evaluations were
 * expensive (FairScheduler.isExpensive), in processes of their own under SCHED_IDLE at nice 19, so
 * that they run on CPU nobody else wants. A task of SCHED_IDLE is set aside the moment a normal task
 * wakes on its core; one at nice 19 may first finish its time slice, and that wait, repeated on
 * every hop of an honest request (API, host, worker, Postgres), is what a hostile tenant cost
 * everyone else (bench:hostile).
 */
type Lane = 'interactive' | 'background';

function forkOptions(maxHeapMb: number, lane: Lane): { execPath?: string; execArgv: string[]; serialization: 'advanced' } {
  const nodeFlags = [`--max-old-space-size=${maxHeapMb}`, '--max-semi-space-size=8', '--stack-size=2000'];
  // fork() runs `execPath ...execArgv script`: with nice(1) that is `nice -n 10 node <flags> script`,
  // in the background lane `chrt --idle 0 nice -n 19 node <flags> script`.
  const nice = NICE_BIN ? [NICE_BIN, '-n', String(lane === 'background' ? DEMOTED_NICE : WORKER_NICE)] : [];
  const command = [...(lane === 'background' && CHRT_BIN ? [CHRT_BIN, '--idle', '0'] : []), ...nice, process.execPath];
  const [execPath, ...prefix] = command;
  // Structured clone rather than JSON: template data keeps its Date values on the way to the worker.
  return execPath === process.execPath ? { execArgv: nodeFlags, serialization: 'advanced' } : { execPath, execArgv: [...prefix, ...nodeFlags], serialization: 'advanced' };
}

/** Whether a task runs tenant expressions (rules, calculated variables, JSONata over query data) rather than only our checks. */
const evaluatesTenantCode = (work: EvalWork) => work.kind !== 'check' || BUDGETED_CHECKS.has(work.name);

/**
 * Checks whose wall-clock backstop is the evaluations' one (wallBackstopMs(EVAL_TIMEOUT_MS), 30 s by
 * default), not that of their tenfold CPU budget: a document's visibleIf conditions, evaluated on every
 * render over the document's data, as its calculated variables are. A runaway condition demoted to
 * nice 19 on a saturated machine gets 1-3 % of a core, so its 10 s of CPU may not come for many
 * minutes, and the checks' backstop (30 x 10 s) left a render without an answer for five of them (a
 * loaded CI run of layout.test.ts). The other checks keep the long one: our own code, which ends, or
 * (httpRows) parsing a query's answer of up to REPORTING_RESULT_MAX_BYTES before its JSONata runs.
 */
const EVALUATION_BACKSTOP_CHECKS: ReadonlySet<CheckName> = new Set(['hiddenComponents']);
const backstopBudgetMs = (work: EvalWork, budgetMs: number, evaluationBudgetMs: number) =>
  work.kind === 'check' && EVALUATION_BACKSTOP_CHECKS.has(work.name) ? evaluationBudgetMs : budgetMs;

/** How long a task may wait for a worker to take it, load its code and start it (a safety net, not a budget). */
const START_TIMEOUT_MS = 30_000;

/**
 * Checks of saved definitions are our own code, linear in their input (at most JSON_BODY_LIMIT):
 * they run in the workers to keep the request loop free, and get a budget this many times the
 * expressions' one, so that a large honest template can be saved on a busy machine.
 */
const CHECK_BUDGET_FACTOR = 10;

/**
 * The evaluator of domain/evaluation.ts as the evaluation host (eval-host.ts) uses it: what tenants
 * sent and what comes back stay packed (eval-task.ts) from the service process to the worker and back.
 */
export interface PackedEvaluator {
  validate(req: Omit<ValidateRequest, 'payload'> & { payload: Packed<unknown> }): Promise<Packed<ValidationOutcome>>;
  calculate(req: Omit<CalculateRequest, 'scope'> & { scope: Packed<Record<string, unknown>> }): Promise<Packed<Record<string, unknown>>>;
  check(tenant: string, name: CheckName, args: Packed<unknown[]>): Promise<Packed<unknown>>;
  close(): Promise<void>;
}

/**
 * The evaluation pool (domain/evaluation.ts): worker *processes* (workerpool), each with its own
 * heap limit, behind a fair scheduler (one tenant cannot occupy every worker), with a kill timer
 * per task that starts when a worker takes it. Processes rather than threads: a worker thread's
 * `resourceLimits` does not survive one allocation larger than the limit (V8 aborts the whole
 * process: `$uppercase($pad("", 200000000))` brought the API down in a thread), while a child
 * process that runs out of heap dies alone. A killed or crashed worker is replaced by workerpool;
 * the caller still gets a precise answer, rebuilt from the progress the worker reported. A worker
 * that dies on its own while workerpool is ending it is not waited for (process-pool.ts), and every
 * task ends at a deadline counted from dispatch, whether or not a worker ever took it.
 */
export function createEvalPool(options: EvalPoolOptions): PackedEvaluator {
  const workers = (lane: Lane, minWorkers: number, maxWorkers: number) =>
    processPool(threadFile('evaluation/eval-worker'), {
      minWorkers,
      maxWorkers,
      maxQueueSize: Infinity,
      // The V8 report of a worker that ran out of heap is captured, not written to the service's stderr:
      // workerpool hands what a worker writes to the running task's `on` (below), which drops it.
      emitStdStreams: true,
      forkOpts: forkOptions(options.maxHeapMb, lane),
      // A killed task's worker is asked to clean up and, busy as it is, terminated this soon after.
      workerTerminateTimeout: 100,
    });
  // Interactive: one process more than EVAL_POOL_SIZE, so a cheap tenant can use all but one while
  // a tenant not yet known to be expensive holds a single worker, and a killed worker's replacement
  // starts while the others serve. Every process is a slot; a tenant holds at most all but one.
  const pools: Record<Lane, ReturnType<typeof workerpool.pool>> = {
    interactive: workers('interactive', options.poolSize + 1, options.poolSize + 1),
    // Background: started when the first expensive tenant needs it; each such tenant holds one.
    background: workers('background', 0, options.poolSize),
  };
  const schedulers: Record<Lane, FairScheduler> = {
    interactive: new FairScheduler(options.poolSize + 1),
    background: new FairScheduler(options.poolSize, 1),
  };
  /** A tenant stays in the background lane while either lane's recent costs say it is expensive. */
  const laneOf = (tenant: string): Lane =>
    schedulers.interactive.isExpensive(tenant) || schedulers.background.isExpensive(tenant) ? 'background' : 'interactive';
  const budgetMs = options.timeoutMs;
  const checkBudgetMs = budgetMs * CHECK_BUDGET_FACTOR;

  type Interrupted = { interrupted: true; memory: boolean; progress: EvalProgress[]; cpuMs?: number };

  /** Runs a task in a worker; resolves to the worker's result or to how it was interrupted. */
  function dispatch(tenant: string, work: EvalWork, budgetMs = options.timeoutMs): Promise<EvalResult | Interrupted> {
    // Checks that run no tenant expression are our own code, linear in their capped input: they stay
    // in the interactive lane, so a project that just ran a runaway transform can still save a query on a busy machine.
    const lane = evaluatesTenantCode(work) ? laneOf(tenant) : 'interactive';
    const pool = pools[lane];
    // CPU time charged to the tenant while the task runs; taken back when it ends, as its whole cost is charged then.
    let charged = 0;
    return schedulers[lane].submit(tenant, async () => {
      const progress: EvalProgress[] = [];
      let watch: CpuWatch | undefined;
      // The budget counts the worker's CPU time from the moment it starts the task (its first
      // report), not from dispatch: a worker that replaces a killed one first has to load its code.
      let demoteTimer: NodeJS.Timeout | undefined;
      let demoted: number | undefined;
      let long = false;
      // Known-expensive work waits for idle CPU, and its wait counts (domain/cpu-budget.ts, startWallBudget).
      const clock = lane === 'background' ? 'wall' : 'cpu';
      const task = pool.exec('evaluate', [{ ...work, budgetMs, clock }], {
        on: (p: EvalProgress | { stdout?: string; stderr?: string }) => {
          // With emitStdStreams the worker's output comes here too, as { stdout } or { stderr }: not
          // progress. Taken for it, a chunk written before the first report kept the CPU watch from starting.
          if (!('at' in p) || typeof p.at !== 'number') return;
          if (p.at === STARTED && progress.length === 0) {
            const pid = p.pid;
            // cancel() rejects `task` itself, which the await below turns into an interruption.
            const onUsage = (cpuMs: number) => {
              if (clock !== 'cpu') return;
              schedulers[lane].chargeRunning(tenant, cpuMs - charged);
              charged = Math.max(charged, cpuMs);
            };
            const wallLimitMs = clock === 'wall' ? budgetMs + KILL_GRACE_MS : wallBackstopMs(backstopBudgetMs(work, budgetMs, options.timeoutMs));
            if (pid) watch = watchCpu(pid, p.cpuMs, budgetMs + KILL_GRACE_MS, wallLimitMs, () => void task.cancel(), onUsage);
            if (pid && lane === 'interactive') {
              demoteTimer = setTimeout(() => {
                demoted = renice(pid, DEMOTED_NICE) ? pid : undefined;
                long = true;
                schedulers[lane].markLong(tenant, true);
              }, DEMOTE_AFTER_MS);
            }
          }
          progress.push(p);
        },
      });
      // A safety net from dispatch, for a worker that never starts the task: a check's budget keeps it
      // long, as a cold worker first loads the checks' module (slow on a loaded machine, and not the
      // tenant's work). Our own timer, not task.timeout(): workerpool starts that one only when a
      // worker takes the task, so a task queued behind a worker that never frees up would never end.
      const deadline = setTimeout(() => void task.cancel(), wallBackstopMs(budgetMs) + START_TIMEOUT_MS);
      try {
        return (await task) as EvalResult;
      } catch (err) {
        const cpuMs = watch?.usedMs();
        if (err instanceof workerpool.Promise.CancellationError || err instanceof workerpool.Promise.TimeoutError) {
          return { interrupted: true, memory: false, progress, cpuMs };
        }
        if (/terminated unexpectedly/i.test(String((err as Error).message))) return { interrupted: true, memory: true, progress, cpuMs };
        throw err;
      } finally {
        clearTimeout(deadline);
        watch?.stop();
        // Its whole cost is charged when it ends (below), in place of what it charged while running.
        schedulers[lane].settleRunning(tenant, charged);
        clearTimeout(demoteTimer);
        if (long) schedulers[lane].markLong(tenant, false);
        // Back to the workers' priority for the next task.
        if (demoted) renice(demoted, WORKER_NICE);
      }
      // Interactive: the tenant is charged with the CPU time the task used, not with how long it
      // waited for a core, so a loaded machine does not make honest work look expensive. A task
      // stopped at a limit once it had started is charged at least its whole budget: on a machine
      // with no idle CPU a runaway task demoted to nice 19 may get less than its budget before the
      // wall-clock backstop ends it, and charged by CPU its tenant would look cheap and stay in this
      // lane. Background: with the time it held its slot, as its budget counts; charged by CPU,
      // starved work would look cheap and its tenant would return to the interactive lane with it
      // (bench:hostile).
    }, (result) => {
      if (lane === 'background' || result.cpuMs === undefined) return undefined;
      const stopped = 'interrupted' in result && result.progress.length > 0;
      return stopped ? Math.max(budgetMs, result.cpuMs) : result.cpuMs;
    });
  }

  const limitReason = (memory: boolean) => (memory ? `evaluation memory limit exceeded (${options.maxHeapMb} MB)` : budgetMessage(budgetMs));
  const failure = (error: { code: string; message: string; relatedInfo?: Record<string, unknown> }) =>
    new AppError(error.code as ErrorCode, error.message, error.relatedInfo);

  return {
    async validate(req) {
      const start = performance.now();
      const { tenant, gateId, version, definition, payload } = req;
      const result = await dispatch(tenant, { kind: 'validate', gateId, version, definition, payload });
      if ('interrupted' in result) {
        return pack(interruptedOutcome(definition, result.progress, limitReason(result.memory), Math.round(performance.now() - start)));
      }
      if (!result.ok) throw failure(result.error);
      if (!('outcome' in result)) throw new Error('evaluation worker answered a validation without an outcome');
      return result.outcome;
    },

    async calculate(req) {
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

    async check(tenant, name, args) {
      const result = await dispatch(tenant, { kind: 'check', name, args }, checkBudgetMs);
      if ('interrupted' in result) {
        const message = result.memory
          ? `The definition could not be checked within the evaluation memory limit (${options.maxHeapMb} MB)`
          : `The definition could not be checked within the evaluation budget (${checkBudgetMs} ms)`;
        throw new AppError('ERR_LIMIT_008', message, { check: name, limitMs: checkBudgetMs });
      }
      if (!result.ok) throw failure(result.error);
      if (!('checked' in result)) throw new Error('evaluation worker answered a check without a result');
      return result.checked;
    },

    async close() {
      // Give workerpool a moment to end its workers, then make sure no worker process outlives the pool.
      const all = Object.values(pools);
      const children = all.flatMap((pool) => (pool as unknown as { workers?: Array<{ worker?: ChildProcess | null }> }).workers?.map((w) => w.worker) ?? []);
      const terminated = Promise.all(all.map((pool) => pool.terminate(true).catch(() => undefined)));
      await Promise.race([terminated, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      for (const child of children) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
