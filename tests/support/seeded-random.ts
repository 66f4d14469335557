/** mulberry32: a small seeded generator of numbers in [0, 1), the same sequence on every machine (differential tests). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * How many random cases a differential or property test draws: `full` when FORMWORK_TEST_FULL=1 (npm test's
 * unit phase sets it, so CI checks the whole count), else `quick`, so `npm run test:unit` stays in seconds
 * (docs/testing.md). The sequence is the same either way; the quick run checks its first `quick` cases.
 */
export function testCases(full: number, quick: number): number {
  return process.env.FORMWORK_TEST_FULL === '1' ? full : quick;
}
