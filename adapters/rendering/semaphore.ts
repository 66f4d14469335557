/** Bounds how many renders run at once; waiters are served first come, first served. */
export class Semaphore {
  private readonly waiters: Array<() => void> = [];
  private available: number;

  constructor(readonly size: number) {
    this.available = size;
  }

  get free(): number {
    return this.available;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Waits for a permit; an abort while waiting leaves the queue and rejects with the signal's reason. */
  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.available > 0) {
      this.available -= 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    // The permit passes straight to the next waiter, so a newcomer cannot overtake it.
    if (next) next();
    else this.available += 1;
  }

  async with<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}
