import { getPriority, setPriority } from 'node:os';

/**
 * Imported first by the evaluation worker, so that the process runs below normal priority while it
 * still loads its code: when the machine is busy, the processes that answer HTTP and poll Temporal
 * come first, also while a killed worker is being replaced.
 */
try {
  // Only ever lower: a background-lane worker already starts at nice 19 (and SCHED_IDLE).
  if (getPriority() < 10) setPriority(10); // WORKER_NICE in eval-pool.ts
} catch {
  // Not permitted here: the process keeps its priority.
}
