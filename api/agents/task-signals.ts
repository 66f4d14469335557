import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * Wake-ups for agent tasks (docs/reporting.md "Agents"): one LISTEN connection per API process on
 * `formwork_agent_tasks`, which a trigger on reporting_agent_tasks notifies (`q:<agentId>` when a task is
 * queued, `d:<taskId>` when one ends; db/migrations/1732200011000-reporting-agent-signals.ts). A long
 * poll or a request waiting for an agent's answer arms a signal before it looks at the table, then
 * waits for the signal or its fallback interval, whichever comes first: with the connection, a task is
 * leased and an answer returned within milliseconds; without it (LISTEN refused, connection lost and
 * not yet back), the fallback interval alone paces the waits, as before.
 */
const CHANNEL = 'formwork_agent_tasks';
const RECONNECT_MS = 2000;

export interface Armed {
  /** Resolves on the signal or after `ms`, whichever is first. */
  wait(ms: number): Promise<void>;
  cancel(): void;
}

export class TaskSignals {
  private readonly waiters = new Map<string, Set<() => void>>();
  private client: Client | null = null;
  private closed = false;
  private listening = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly url: string | undefined) {}

  /** Whether notifications arrive now (otherwise waits last their whole fallback interval). */
  get live(): boolean {
    return this.listening;
  }

  /** A signal for `key` (`q:<agentId>`, `d:<taskId>`), armed before the caller looks at the table. */
  arm(key: string): Armed {
    this.ensure();
    let fire: () => void = () => undefined;
    const fired = new Promise<void>((resolve) => {
      fire = resolve;
    });
    const set = this.waiters.get(key) ?? new Set();
    set.add(fire);
    this.waiters.set(key, set);
    const cancel = () => {
      set.delete(fire);
      if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
    };
    return {
      wait: async (ms) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([fired, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
        } finally {
          clearTimeout(timer);
          cancel();
        }
      },
      cancel,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    this.listening = false;
    await c?.end().catch(() => undefined);
  }

  private ensure(): void {
    if (this.client || this.closed || !this.url || this.retry) return;
    const client = new Client({ connectionString: this.url, application_name: 'formwork-agent-signals' });
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      void client.end().catch(() => undefined);
      if (!this.closed) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          if (this.waiters.size > 0) this.ensure();
        }, RECONNECT_MS);
        this.retry.unref();
      }
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (msg) => {
      const set = msg.channel === CHANNEL && msg.payload ? this.waiters.get(msg.payload) : undefined;
      if (set) for (const fire of [...set]) fire();
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        if (this.client === client) this.listening = true;
      })
      .catch(lost);
  }
}

const byDatabase = new WeakMap<DataSource, TaskSignals>();

/** The process's signals for this database (one LISTEN connection, made on first use). */
export function taskSignals(db: DataSource): TaskSignals {
  let signals = byDatabase.get(db);
  if (!signals) {
    signals = new TaskSignals((db.options as { url?: string }).url);
    byDatabase.set(db, signals);
  }
  return signals;
}

/** Ends the LISTEN connection (the API's shutdown). */
export async function closeTaskSignals(db: DataSource): Promise<void> {
  await byDatabase.get(db)?.close();
  byDatabase.delete(db);
}
