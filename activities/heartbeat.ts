/**
 * Heartbeats every `ms` while `fn` runs, however it ends. An activity whose work has no natural
 * checkpoints (a render, a query, an upload) still tells Temporal it is alive, so its heartbeat
 * timeout finds a dead worker quickly without cutting a long job short. `beat` is the activity
 * context's `heartbeat`, with the details it reports if any.
 */
export async function withHeartbeat<T>(beat: () => void, ms: number, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(beat, ms);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
