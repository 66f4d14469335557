import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The credentials an API process resolved (API keys, OAuth access tokens), kept for a few seconds
 * (CREDENTIAL_CACHE_TTL_MS) so that a call with a known key costs no database round trip, and
 * dropped the moment what they were read from changes (docs/performance.md, "Request path").
 *
 * Triggers on the rows behind a credential (db/migrations/1732200011470-credential-signals.ts)
 * notify `formwork_credentials` with a tag (`key:<id>`, `user:<id>`, `member:<project>:<user>`,
 * ...); every API process listens on one connection and evicts each entry carrying that tag. So a
 * revocation, a deletion, a member removed or an account being deleted ends the credential on every
 * replica as soon as Postgres delivers the notification, whichever process or script made it.
 *
 * Nothing is cached unless the process is listening: a lost connection clears the cache and every
 * call reads the database until LISTEN is back. A read that overlapped a notification (or a change
 * of the connection's state) is not kept, so a value read just before a change can never outlive it.
 * Only working credentials are kept: a refused one is read again each time, so one that starts to
 * work (a restored account, a key switched back on) does so at once.
 */
const CHANNEL = 'formwork_credentials';
const RECONNECT_MS = 2000;
/** How long a fence waits for its own notification before it gives up and empties the cache. */
const FENCE_TIMEOUT_MS = 2000;
const DEFAULT_MAX_ENTRIES = 10_000;

interface Entry {
  value: unknown;
  tags: string[];
  until: number;
}

export interface CredentialCacheOptions {
  /** How long an entry is used without reading the database again; 0 turns the cache off. */
  ttlMs: number;
  maxEntries?: number;
  /** Called when the LISTEN connection fails (it is retried every RECONNECT_MS). */
  onError?: (err: unknown) => void;
}

export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every notification and every change of the connection: a read that spans one is not kept. */
  private generation = 0;
  private client: Client | null = null;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly fences = new Map<string, () => void>();
  private readonly maxEntries: number;

  constructor(
    private readonly db: DataSource,
    private readonly options: CredentialCacheOptions,
  ) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /** Whether entries are kept now (the cache is on and its LISTEN connection is up). */
  get live(): boolean {
    return this.options.ttlMs > 0 && this.listening;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The value cached under `key`, else `load()`'s. `tagsOf` says what the loaded value depends on,
   * or null when it must not be kept (a refused credential).
   */
  async resolve<V>(key: string, load: () => Promise<V>, tagsOf: (value: V) => string[] | null): Promise<V> {
    if (this.options.ttlMs <= 0) return load();
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) return hit.value as V;
    if (hit) this.entries.delete(key);
    this.ensure();
    const generation = this.generation;
    const value = await load();
    if (this.listening && generation === this.generation) {
      const tags = tagsOf(value);
      if (tags) {
        if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
        this.entries.set(key, { value, tags, until: Date.now() + this.options.ttlMs });
      }
    }
    return value;
  }

  /**
   * Returns once this process has received every notification committed before the call: a change
   * made by this process is then gone from its own cache before its answer leaves (other processes
   * receive the same notifications at the same moment). With nothing cached there is nothing to wait for.
   */
  async fence(): Promise<void> {
    if (this.entries.size === 0 || !this.listening) return;
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.fences.set(id, () => resolve(true));
      timer = setTimeout(() => resolve(false), FENCE_TIMEOUT_MS);
    });
    try {
      await this.db.query('SELECT pg_notify($1, $2)', [CHANNEL, `sync:${id}`]);
      if (!(await arrived)) this.clear();
    } catch (err) {
      this.clear();
      throw err;
    } finally {
      clearTimeout(timer);
      this.fences.delete(id);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    this.setListening(false);
    await c?.end().catch(() => undefined);
  }

  private clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private setListening(on: boolean): void {
    this.listening = on;
    // Whatever was read before the connection (re)started may have missed a notification.
    this.clear();
  }

  private onNotification(payload: string): void {
    if (payload.startsWith('sync:')) {
      this.fences.get(payload.slice(5))?.();
      return;
    }
    this.generation += 1;
    for (const [key, entry] of this.entries) if (entry.tags.includes(payload)) this.entries.delete(key);
  }

  private ensure(): void {
    if (this.client || this.closed || this.retry) return;
    const url = (this.db.options as { url?: string }).url;
    if (!url) return;
    const client = new Client({ connectionString: url, application_name: 'formwork-credential-cache' });
    this.client = client;
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.setListening(false);
      if (err) this.options.onError?.(err);
      void client.end().catch(() => undefined);
      if (!this.closed) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.ensure();
        }, RECONNECT_MS);
        this.retry.unref();
      }
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload) this.onNotification(msg.payload);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        if (this.client === client && !this.closed) this.setListening(true);
      })
      .catch(lost);
  }
}

/** Tags of a credential minted by `userId` in `projectId`: it dies with the user's place in the project. */
export function creatorTags(projectId: string, userId: string): string[] {
  return [`user:${userId}`, `member:${projectId}:${userId}`, `project:${projectId}`];
}
