import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AppError } from '../../../domain/errors';
import { useEvaluator } from '../../support/evaluation';
import { waitFor } from '../../support/wait';
import type { GateValidationDefinition } from '../../../domain/flow/gate.types';
import type { TemplateSchema } from '../../../domain/templates/template.types';

/** Scheduling policy and nice value of a process (/proc/<pid>/stat fields 41 and 19); SCHED_IDLE is 5. */
function schedulingOf(pid: number): { policy: number; nice: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { policy: Number(fields[38]), nice: Number(fields[16]) };
  } catch {
    return undefined; // ended meanwhile
  }
}
const SCHED_IDLE = 5;

/** The program a process runs now (/proc/<pid>/comm): changes with each exec. */
function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined; // ended meanwhile
  }
}

/** Pids of this process's children whose command line contains `pattern` (pgrep). */
function childrenOf(parent: number, pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(parent), '-f', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** CPU milliseconds the processes used (/proc/<pid>/stat utime + stime, in 10 ms ticks). */
const cpuOf = (pids: number[]) =>
  pids.reduce((sum, pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) * 10;
  }, 0);

const gate = (expression: string): GateValidationDefinition => ({
  validationMode: 'variables',
  schema: { type: 'object', properties: { n: { type: 'number' } } } as GateValidationDefinition['schema'],
  businessRules: [{ id: 'r1', expression, message: 'n must be positive' }],
  freetextConfig: null,
});

describe('evaluation host: the pool runs in a process of its own', () => {
  const evaluator = useEvaluator({ poolSize: 1, timeoutMs: 1000 });

  it('forks the evaluation workers from the host, never from the service process', async () => {
    const outcome = await evaluator.validate({ tenant: 'p1', gateId: 'g1', version: 1, definition: gate('n > 0'), payload: { n: 2 } });
    expect(outcome.valid).toBe(true);
    const [host] = childrenOf(process.pid, 'eval-host-main');
    expect(host).toBeGreaterThan(0);
    expect(childrenOf(process.pid, 'eval-worker')).toEqual([]);
    expect(childrenOf(host, 'eval-worker').length).toBeGreaterThan(0);
  });

  it('answers a call that was under way when the host died, from a new host', async () => {
    const [host] = childrenOf(process.pid, 'eval-host-main');
    const slow = evaluator.validate({ tenant: 'p1', gateId: 'g2', version: 1, definition: gate('($f := function($n){ $f($n + 1) }; $f(0))'), payload: { n: 1 } });
    // Killed while its worker runs the endless recursion.
    await waitFor(() => childrenOf(host, 'eval-worker').length > 0);
    process.kill(host, 'SIGKILL');
    const outcome = await slow;
    expect(outcome.valid).toBe(false);
    expect(outcome.steps.find((s) => s.status === 'error')).toBeDefined();
    const [replacement] = childrenOf(process.pid, 'eval-host-main');
    expect(replacement).not.toBe(host);
    const next = await evaluator.validate({ tenant: 'p1', gateId: 'g1', version: 1, definition: gate('n > 0'), payload: { n: -1 } });
    expect(next.valid).toBe(false);
    expect(next.failedLayer).toBe('business_rules');
  });

  it('keeps the catalogued error a check throws, code and status', async () => {
    const err = await evaluator.check('p1', 'templateFile', '{ not json').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'ERR_TMPL_016', status: 400 });
    expect((err as Error).message).toMatch(/^Invalid JSON file format/);
  });
});

describe('evaluation lanes: expensive work runs on CPU nobody else wants', () => {
  const evaluator = useEvaluator({ poolSize: 1, timeoutMs: 1000 });

  it('moves a tenant whose evaluations are expensive to background workers (SCHED_IDLE, nice 19) while a cheap tenant keeps its own', async () => {
    const recursion = gate('($f := function($n){ $f($n + 1) }; $f(0))');
    const hog = () => evaluator.validate({ tenant: 'hog', gateId: 'g3', version: 1, definition: recursion, payload: { n: 1 } });
    // The host starts with the first call. A background worker starts as `chrt --idle 0 nice -n 19
    // node ...`: counted once chrt has set SCHED_IDLE. On a machine with no idle CPU such a process may
    // not run again for a long while, so it may still be nice(1) about to set 19 (its arguments say
    // so); once it runs node, its nice value is read.
    const idleWorkers = () =>
      childrenOf(process.pid, 'eval-host-main')
        .flatMap((host) => childrenOf(host, 'eval-worker'))
        .filter((pid) => schedulingOf(pid)?.policy === SCHED_IDLE);
    /** Runs node at nice 19, or is chrt(1) or nice(1) about to start node at nice 19; undefined once it ended. */
    const atNice19 = (pid: number): boolean | undefined => {
      try {
        if (commandOf(pid) === 'node') return schedulingOf(pid)?.nice === 19;
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const nice = args.findIndex((arg) => arg === 'nice' || arg.endsWith('/nice'));
        return nice >= 0 && args[nice + 1] === '-n' && args[nice + 2] === '19' && args[nice + 3] === process.execPath;
      } catch {
        return undefined; // ended meanwhile (its task over, the worker is retired)
      }
    };
    const cheap = () => evaluator.validate({ tenant: 'cheap', gateId: 'g1', version: 1, definition: gate('n > 0'), payload: { n: 2 } });
    expect((await cheap()).valid).toBe(true);
    expect(childrenOf(process.pid, 'eval-host-main')).toHaveLength(1);
    expect(idleWorkers()).toEqual([]);
    // Runs of the whole 1 s budget: more than a second of evaluation, and well over 50 ms each.
    for (let i = 0; i < 2; i += 1) expect((await hog()).steps.find((s) => s.status === 'error')?.errors?.[0]?.message).toMatch(/evaluation budget exceeded/);
    const third = hog();
    // Read as it is found: the worker may end as soon as its task does, on a loaded machine before a second look.
    const found = await waitFor(() => idleWorkers().map((pid) => ({ pid, nice19: atNice19(pid) })).find((w) => w.nice19 !== undefined), { what: 'a SCHED_IDLE background worker' });
    expect(found.nice19).toBe(true);
    // Meanwhile a cheap tenant is answered by the interactive workers.
    expect((await cheap()).valid).toBe(true);
    expect((await third).steps.find((s) => s.status === 'error')?.errors?.[0]?.message).toMatch(/evaluation budget exceeded/);
    // On a machine with no idle CPU (another test run beside this one) a SCHED_IDLE worker may not get to
    // load its code: the pool then answers at its backstop, START_TIMEOUT_MS + wallBackstopMs = 60 s.
  });
});

describe('evaluation budgets count CPU time, not waiting', () => {
  // A 3 s budget: the calculation below needs about 400 ms of CPU on an idle core, and on a machine
  // that other test runs saturate the same work was measured at more than 1 s of CPU time.
  const evaluator = useEvaluator({ poolSize: 1, timeoutMs: 3000 });

  it('answers a calculation whose worker was held (SIGSTOP) well past its budget, as a starved process on a busy machine is', async () => {
    // About 400 ms of CPU on an idle core: within the 3 s budget, however long it has to wait.
    const calculated = [{ name: 'total', expression: '$sum([1..150].($sum([1..1000].($ * 2))))' }];
    // The host and its workers start with the first call.
    expect(await evaluator.calculate({ tenant: 'waits', calculated: [{ name: 'one', expression: '1' }], scope: {} })).toEqual({ one: 1 });
    const workers = childrenOf(process.pid, 'eval-host-main').flatMap((host) => childrenOf(host, 'eval-worker'));
    const before = cpuOf(workers);
    const answer = evaluator.calculate({ tenant: 'waits', calculated, scope: {} });
    await waitFor(() => cpuOf(workers) - before >= 30, { what: 'the worker computing' });
    workers.forEach((pid) => process.kill(pid, 'SIGSTOP'));
    try {
      // Held for longer than the budget and the kill grace together: a wall-clock budget fails it here.
      await new Promise((resolve) => setTimeout(resolve, 3500));
    } finally {
      workers.forEach((pid) => process.kill(pid, 'SIGCONT'));
    }
    await expect(answer).resolves.toEqual({ total: 150150000 });
  });
});

describe('evaluation budgets stop work that uses them in CPU time', () => {
  const evaluator = useEvaluator({ poolSize: 1, timeoutMs: 1000 });

  it('still stops a calculation that uses its budget in CPU time, naming the variable', async () => {
    const err = await evaluator
      .calculate({ tenant: 'burns', calculated: [{ name: 'spin', expression: '($f := function($n){ $f($n + 1) }; $f(0))' }], scope: {} })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_LIMIT_008', relatedInfo: { field: 'spin', limitMs: 1000 } });
    expect((err as Error).message).toMatch(/Calculated variable 'spin' exceeded the evaluation budget/);
  });
});

describe('a document\'s visibleIf conditions end at the evaluations\' wall-clock backstop, however little CPU they get', () => {
  const evaluator = useEvaluator({ poolSize: 1, timeoutMs: 1000 });
  const visibility = (visibleIf: string) => ({
    schema: { pageSize: 'A4', sections: [{ id: 's', components: [{ id: 'c', type: 'text', props: { text: 'x', visibleIf } }] }] } as unknown as TemplateSchema,
    data: {},
    maxLoopIterations: 100,
  });

  it('answers ERR_LIMIT_008 for a runaway visibleIf whose worker is held (SIGSTOP), as a demoted worker on a saturated machine is', async () => {
    // An honest condition first: the worker loads the checks' module (before a task's clock starts) and is warm.
    expect(await evaluator.check('starved', 'hiddenComponents', visibility('false'))).toEqual(['c']);
    const workers = childrenOf(process.pid, 'eval-host-main').flatMap((host) => childrenOf(host, 'eval-worker'));
    const before = cpuOf(workers);
    const answer = evaluator.check('starved', 'hiddenComponents', visibility('($f := function($n){ $f($n + 1) }; $f(0))')).catch((e: unknown) => e);
    // The runaway is under way (its worker reported the start before JSONata's first step), then gets no CPU at all:
    // its 10 s CPU budget (the checks' one) is never spent, so only the wall-clock backstop can end it. That of the
    // checks (30 x 10 s) outlasted Jest's 180 s; conditions get the evaluations' one (30 s, eval-pool.ts).
    await waitFor(() => cpuOf(workers) - before >= 50, { what: 'the worker running the condition' });
    workers.forEach((pid) => process.kill(pid, 'SIGSTOP'));
    try {
      expect(await answer).toMatchObject({ code: 'ERR_LIMIT_008', relatedInfo: { check: 'hiddenComponents' } });
    } finally {
      workers.forEach((pid) => process.kill(pid, 'SIGCONT'));
    }
  });
});
