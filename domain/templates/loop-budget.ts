import { AppError } from '../errors';

/**
 * Counts every data-driven iteration of one document (repeat passes, table rows, list items),
 * so nested loops cannot multiply into an unbounded document: the limit is on the total.
 */
export class LoopBudget {
  private used = 0;

  constructor(readonly max: number) {}

  get count(): number {
    return this.used;
  }

  /** Takes `n` iterations at once, before the work, so an oversized array fails fast. */
  consume(n: number, componentId?: string): void {
    this.used += n;
    if (this.used > this.max) {
      throw new AppError('ERR_LIMIT_007', `Loop iteration limit of ${this.max} exceeded`, {
        limit: this.max,
        ...(componentId ? { componentId } : {}),
      });
    }
  }
}
