import { AppError } from './errors';

/**
 * Shares a few slots (evaluation threads) among tenants: each tenant has its own FIFO, slots go
 * round-robin to the tenants with work waiting, and one tenant holds at most `perTenant` slots at
 * once, so a tenant flooding the service with expensive work waits behind itself while everyone
 * else keeps a free slot. A tenant with more than `maxQueued` jobs waiting is answered at once
 * with a catalogued 429 instead of growing the queue.
 */
export class FairScheduler {
  private readonly queues = new Map<string, Array<() => void>>();
  private readonly running = new Map<string, number>();
  private busy = 0;

  constructor(
    private readonly slots: number,
    private readonly perTenant = Math.max(1, slots - 1),
    private readonly maxQueued = 256,
  ) {}

  submit<T>(tenant: string, job: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(tenant) ?? [];
    if (queue.length >= this.maxQueued) {
      return Promise.reject(new AppError('ERR_QUOTA_003', 'Too many evaluations waiting for this project; retry shortly', { retryAfter: 1 }));
    }
    return new Promise<T>((resolve, reject) => {
      queue.push(() => {
        job()
          .then(resolve, reject)
          .finally(() => {
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

  private pump(): void {
    let progressed = true;
    while (this.busy < this.slots && progressed) {
      progressed = false;
      for (const tenant of [...this.queues.keys()]) {
        if (this.busy >= this.slots) break;
        const queue = this.queues.get(tenant)!;
        if ((this.running.get(tenant) ?? 0) >= this.perTenant) continue;
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
