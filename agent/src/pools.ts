import type { PoolStats } from './client';

interface Pool {
  max: number;
  active: number;
  waiters: Array<() => void>;
  lastError?: string;
}

/**
 * Per datasource, at most `pool.max` tasks run at once (each runner holds one connection); the rest
 * wait their turn in order. The heartbeat reports each datasource's numbers (`pools`).
 */
export class DatasourcePools {
  private readonly pools = new Map<string, Pool>();

  private pool(datasourceId: string, max: number): Pool {
    let pool = this.pools.get(datasourceId);
    if (!pool) {
      pool = { max, active: 0, waiters: [] };
      this.pools.set(datasourceId, pool);
    }
    // The latest task carries the datasource's current setting.
    pool.max = max;
    return pool;
  }

  /** Waits for a free slot (or rejects with the signal's reason); the returned function frees it. */
  async acquire(datasourceId: string, max: number, signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    const pool = this.pool(datasourceId, Math.max(1, max));
    if (pool.active < pool.max && pool.waiters.length === 0) {
      pool.active += 1;
    } else {
      // A freed slot is handed to the first waiter directly (`active` stays counted for it).
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          pool.waiters = pool.waiters.filter((w) => w !== turn);
          reject(signal.reason as Error);
        };
        pool.waiters.push(turn);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = pool.active <= pool.max ? pool.waiters.shift() : undefined;
      if (next) next();
      else pool.active -= 1;
    };
  }

  recordError(datasourceId: string, message: string | undefined): void {
    const pool = this.pools.get(datasourceId);
    if (pool) pool.lastError = message;
  }

  stats(): PoolStats[] {
    return [...this.pools.entries()].map(([datasourceId, p]) => ({
      datasourceId,
      size: p.active,
      max: p.max,
      idle: 0,
      waiting: p.waiters.length,
      ...(p.lastError ? { lastError: p.lastError.slice(0, 500) } : {}),
    }));
  }
}
