import { createEvalHost } from '../../adapters/evaluation/eval-host';
import type { Evaluator } from '../../domain/evaluation';

/**
 * The real evaluation host and its pool of worker processes (running the build in dist/) for tests that render or
 * validate without the whole app. Call it at the top of a test file: it is closed after the file.
 */
export function useEvaluator(options: { poolSize?: number; timeoutMs?: number; maxHeapMb?: number } = {}): Evaluator {
  const evaluator = createEvalHost({ poolSize: 1, timeoutMs: 1000, maxHeapMb: 64, ...options });
  afterAll(() => evaluator.close());
  return evaluator;
}
