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

  async acquire(): Promise<void> {
    if (this.available > 0) {
      this.available -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    // The permit passes straight to the next waiter, so a newcomer cannot overtake it.
    if (next) next();
    else this.available += 1;
  }

  async with<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}
