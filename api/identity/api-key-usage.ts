import type { DataSource } from 'typeorm';
import { addApiKeyUsage, utcDay, type ApiKeyUsageBatch } from '../../db/identity/api-key-usage';
import type { Logger } from '../../domain/logger';

/**
 * Buffers API-key usage in memory and writes it in batches: one UPDATE per key and UTC day every
 * `flushMs`, instead of a write on every authenticated request (which would make the key row the
 * hottest row in the database). What a crash loses is at most one interval of statistics.
 */
export interface ApiKeyUsageRecorder {
  /** Counts one request made with the key now; never waits, never throws. */
  record(apiKeyId: string): void;
  /** Writes everything buffered so far; resolves when it is in the database. */
  flush(): Promise<void>;
  /** Stops the timer and flushes what is left (shutdown). */
  stop(): Promise<void>;
}

export interface ApiKeyUsageDeps {
  db: DataSource;
  logger: Logger;
  /** Interval between flushes (config `API_KEY_USAGE_FLUSH_MS`). */
  flushMs: number;
}

export function createApiKeyUsageRecorder(deps: ApiKeyUsageDeps): ApiKeyUsageRecorder {
  // Keyed by key id and day, so requests on both sides of midnight land on their own day.
  let pending = new Map<string, ApiKeyUsageBatch>();
  let running: Promise<void> = Promise.resolve();

  const add = (batch: ApiKeyUsageBatch) => {
    const slot = `${batch.apiKeyId}|${batch.day}`;
    const seen = pending.get(slot);
    if (!seen) pending.set(slot, { ...batch });
    else {
      seen.requests += batch.requests;
      if (batch.lastUsedAt > seen.lastUsedAt) seen.lastUsedAt = batch.lastUsedAt;
    }
  };

  const writeOut = async () => {
    if (pending.size === 0) return;
    const batches = [...pending.values()].sort((a, b) => a.day.localeCompare(b.day));
    pending = new Map();
    for (const [i, batch] of batches.entries()) {
      try {
        await addApiKeyUsage(deps.db, batch);
      } catch (err) {
        // Keep what was not written for the next interval rather than dropping it.
        for (const rest of batches.slice(i)) add(rest);
        deps.logger.warn('api key usage flush failed; retrying next interval', { err, keys: batches.length - i });
        return;
      }
    }
  };

  // Flushes run one after another, so two never write the same counts.
  // A failed flush must not stall the ones after it.
  const flush = () => {
    running = running.catch(() => undefined).then(writeOut);
    return running;
  };

  // A timer tick has no caller to hand an error to: log it rather than let it crash the process.
  const timer = setInterval(() => void flush().catch((err) => deps.logger.error('api key usage flush crashed', { err })), deps.flushMs);
  // Statistics must never keep a process alive that is otherwise done.
  timer.unref();

  return {
    record(apiKeyId) {
      const now = new Date();
      add({ apiKeyId, day: utcDay(now), requests: 1, lastUsedAt: now });
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
