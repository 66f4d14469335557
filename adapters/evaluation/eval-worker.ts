import './lower-priority';
import { createHash } from 'node:crypto';
import workerpool from 'workerpool';
import { startCpuBudget, startWallBudget } from '../../domain/cpu-budget';
import { AppError } from '../../domain/errors';
import { validatePayload } from '../../domain/flow/engine';
import { CompiledGateCache } from '../../domain/flow/gate-cache';
import { LruCache } from '../../domain/lru-cache';
import type { CalculatedVariable } from '../../domain/templates/template.types';
import { compileCalculated, evaluateCompiledCalculated, type CompiledCalculated } from '../../domain/templates/variables';
import { pack, STARTED, unpack, type EvalProgress, type EvalResult, type EvalTask } from './eval-task';

/**
 * One evaluation process (a workerpool child, eval-pool.ts). It evaluates one task at a time and
 * keeps what it compiled: gates by id and schema version, calculated variables by the hash of their
 * expressions (so by template version). It runs below normal priority (lower-priority.ts).
 */

const gates = new CompiledGateCache(500);
const calculations = new LruCache<CompiledCalculated[]>(500);

function compiledCalculations(calculated: CalculatedVariable[]): CompiledCalculated[] {
  const key = createHash('sha256').update(JSON.stringify(calculated.map((c) => [c.name, c.expression]))).digest('base64url');
  return calculations.get(key, () => compileCalculated(calculated));
}

const report = (progress: EvalProgress) => workerpool.workerEmit(progress);

/**
 * The checks' module, loaded on first use: the template checks (Joi schemas of every component, the
 * charting, font and image libraries) are most of what a worker would otherwise load at start, and a
 * worker replacing a killed one starts sooner. Loaded before a task's clock starts: it is our code,
 * not the tenant's work the budget measures.
 */
let checksModule: Promise<typeof import('../../domain/checks')> | undefined;
const loadChecks = () => (checksModule ??= import('../../domain/checks'));

async function evaluate(task: EvalTask): Promise<EvalResult> {
  if (task.kind === 'check') await loadChecks();
  const { user, system } = process.cpuUsage();
  report({ at: STARTED, pid: process.pid, cpuMs: (user + system) / 1000 });
  const cpu = startCpuBudget(task.budgetMs);
  const budget = { ...(task.clock === 'wall' ? startWallBudget(task.budgetMs) : cpu), report };
  // What the task cost in CPU time: the pool's scheduler charges the tenant with it.
  const result = await run(task, budget);
  return { ...result, cpuMs: cpu.usedMs() };
}

async function run(task: EvalTask, budget: ReturnType<typeof startCpuBudget> & { report: typeof report }): Promise<EvalResult> {
  try {
    if (task.kind === 'validate') {
      const gate = gates.get(task.gateId, task.version, () => task.definition);
      return { ok: true, outcome: pack(await validatePayload(gate, unpack(task.payload), budget)) };
    }
    if (task.kind === 'check') {
      const { BUDGETED_CHECKS, CHECKS } = await loadChecks();
      const check = CHECKS[task.name] as (...args: unknown[]) => unknown;
      const args = unpack(task.args);
      // Checks that evaluate tenant JSONata stop on the task's CPU budget (ERR_LIMIT_008), before the pool has to kill the worker.
      if (BUDGETED_CHECKS.has(task.name)) args.push(budget);
      return { ok: true, checked: pack(await check(...args)) };
    }
    return { ok: true, values: pack(await evaluateCompiledCalculated(compiledCalculations(task.calculated), unpack(task.scope), budget)) };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: { code: err.code, message: err.message, relatedInfo: err.relatedInfo } };
    throw err;
  }
}

workerpool.worker({ evaluate });
