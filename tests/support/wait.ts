/**
 * How much longer than its `timeoutMs` a wait may take. A test names the time the condition needs on a
 * machine that runs only this suite, with a margin; a machine shared with a second test run (8 Jest
 * workers on 2 cores, docs/testing.md) was measured 2-3 times slower. A broken service never meets the
 * condition and still fails the wait, later; a test that bounds the time itself says so separately.
 */
export const WAIT_SLACK = 3;

/** Polls until `check` returns a truthy value (returned) or WAIT_SLACK × the timeout passes (throws). */
export async function waitFor<T>(check: () => T | Promise<T>, { timeoutMs = 15000, intervalMs = 50, what = 'condition' } = {}): Promise<NonNullable<T>> {
  timeoutMs *= WAIT_SLACK;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
