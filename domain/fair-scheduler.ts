import { AppError } from './errors';

/**
 * Shares a few slots (evaluation workers) among tenants: each tenant has its own FIFO, slots go
 * round-robin to the tenants with work waiting, and one tenant holds at most `perTenant` slots at
 * once, so a tenant flooding the service waits behind itself while everyone else keeps a free slot.
 * A tenant whose recent jobs were expensive holds at most one slot: more than HEAVY_MS of cost
 * (the CPU time a job reports, else its slot time, so a loaded machine does not make honest work
 * look expensive) and more than EXPENSIVE_JOB_MS per job on average, both decaying by half every
 * HALF_LIFE_MS. Cheap work, such as every honest validation, keeps the rest, however much of it there is: a busy tenant
 * is not an expensive one (counting slot time alone capped a project sending 300 cheap validations a
 * second to one worker). A tenant that hides expensive jobs among many cheap ones keeps all but one
 * slot, which still leaves everyone else one.
 * A tenant with more than `maxQueued` jobs waiting is answered at once with a catalogued 429
 * instead of growing the queue.
 */
const HEAVY_MS = 1000;
const EXPENSIVE_JOB_MS = 50;
const HALF_LIFE_MS = 10_000;

export class FairScheduler {
  private readonly queues = new Map<string, Array<() => void>>();
  private readonly running = new Map<string, number>();
  private busy = 0;
  /** Recent cost per tenant: [decayed milliseconds, decayed number of jobs, when last updated]. */
  private readonly costs = new Map<string, [number, number, number]>();

  constructor(
    private readonly slots: number,
    private readonly perTenant = Math.max(1, slots - 1),
    private readonly maxQueued = 256,
  ) {}

  /**
   * Runs `job` when a slot is free for the tenant. Its cost is what `costOf` says it used (the
   * evaluation pool: the worker's CPU time), else the time it held the slot.
   */
  submit<T>(tenant: string, job: () => Promise<T>, costOf?: (value: T) => number | undefined): Promise<T> {
    const queue = this.queues.get(tenant) ?? [];
    if (queue.length >= this.maxQueued) {
      return Promise.reject(new AppError('ERR_QUOTA_003', 'Too many evaluations waiting for this project; retry shortly', { retryAfter: 1 }));
    }
    return new Promise<T>((resolve, reject) => {
      queue.push(() => {
        const started = Date.now();
        let measured: number | undefined;
        job()
          .then((value) => {
            measured = costOf?.(value);
            resolve(value);
          }, reject)
          .finally(() => {
            this.charge(tenant, measured ?? Date.now() - started);
            this.busy -= 1;
            const n = (this.running.get(tenant) ?? 1) - 1;
            if (n === 0) this.running.delete(tenant);
            else this.running.set(tenant, n);
            this.pump();
          });
      });
      this.queues.set(tenant, queue);
      this.pump();
    });
  }

  /** Jobs waiting, all tenants together. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Decayed [cost milliseconds, jobs] of a tenant. */
  private cost(tenant: string, now = Date.now()): [number, number] {
    const entry = this.costs.get(tenant);
    if (!entry) return [0, 0];
    const decay = 0.5 ** ((now - entry[2]) / HALF_LIFE_MS);
    return [entry[0] * decay, entry[1] * decay];
  }

  private charge(tenant: string, ms: number, jobs = 1): void {
    const now = Date.now();
    const [cost, done] = this.cost(tenant, now);
    if (cost + ms < 1 && done + jobs < 1) this.costs.delete(tenant);
    else this.costs.set(tenant, [cost + ms, done + jobs, now]);
  }

  /** Cost that jobs still running have used so far (chargeRunning), per tenant; not decayed. */
  private readonly runningCosts = new Map<string, number>();

  /**
   * Notes cost a running job has used so far: a tenant whose jobs burn CPU is known to be expensive
   * while they still run, not only once they end. It does not decay while the job runs: a job that
   * needs a minute of waiting for a core to use its second of CPU (a loaded machine, a runaway task at
   * nice 19) is still a job of a second. `settleRunning` takes it back when the job's whole cost is charged.
   */
  chargeRunning(tenant: string, ms: number): void {
    if (ms > 0) this.runningCosts.set(tenant, (this.runningCosts.get(tenant) ?? 0) + ms);
  }

  /** Takes back what an ended job charged while it ran (chargeRunning), before its whole cost is charged. */
  settleRunning(tenant: string, ms: number): void {
    const left = (this.runningCosts.get(tenant) ?? 0) - ms;
    if (left > 0.5) this.runningCosts.set(tenant, left);
    else this.runningCosts.delete(tenant);
  }

  /**
   * Whether a tenant's recent jobs were expensive (more than HEAVY_MS of cost, more than
   * EXPENSIVE_JOB_MS per job on average). Such a tenant holds at most one slot here; the evaluation
   * pool sends its work to the background lane instead (eval-pool.ts).
   */
  isExpensive(tenant: string): boolean {
    const [ended, jobs] = this.cost(tenant);
    const cost = ended + (this.runningCosts.get(tenant) ?? 0);
    return cost > HEAVY_MS && cost > EXPENSIVE_JOB_MS * jobs;
  }

  /** Running jobs per tenant that have been going for long (markLong). */
  private readonly long = new Map<string, number>();

  /**
   * Notes that one of the tenant's running jobs has been going for long (`on`), or no longer is
   * (`off`, when it ends). While one does, the tenant gets no further slot: a runaway job of a
   * tenant not yet known to be expensive holds one slot, not all but one, while its cost builds up.
   */
  markLong(tenant: string, on: boolean): void {
    const n = (this.long.get(tenant) ?? 0) + (on ? 1 : -1);
    if (n <= 0) this.long.delete(tenant);
    else this.long.set(tenant, n);
    if (!on) this.pump();
  }

  private limitOf(tenant: string): number {
    return this.isExpensive(tenant) || this.long.has(tenant) ? 1 : this.perTenant;
  }

  private pump(): void {
    let progressed = true;
    while (this.busy < this.slots && progressed) {
      progressed = false;
      for (const tenant of [...this.queues.keys()]) {
        if (this.busy >= this.slots) break;
        const queue = this.queues.get(tenant)!;
        if ((this.running.get(tenant) ?? 0) >= this.limitOf(tenant)) continue;
        const start = queue.shift()!;
        // Re-inserting moves the tenant behind the others: round-robin.
        this.queues.delete(tenant);
        if (queue.length > 0) this.queues.set(tenant, queue);
        this.busy += 1;
        this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
        progressed = true;
        start();
      }
    }
  }
}
