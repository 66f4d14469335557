/** Spec metric: the percentage of ended generations that succeeded, two decimals; 0 when none ended. */
export function successRate(completed: number, failed: number): number {
  const ended = completed + failed;
  return ended === 0 ? 0 : Math.round((completed / ended) * 10_000) / 100;
}
