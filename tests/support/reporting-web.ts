import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { TestApp } from './app';

/**
 * Helpers of the Reporting browser tests: a scratch database on the test Postgres for a datasource to
 * read, and the next fire times of a simple cron expression worked out here, independently of the
 * service (a plain walk over every minute, reading the wall clock in the zone with Intl).
 */

export interface ScratchDatabase {
  name: string;
  /** A postgres datasource's `config` and `secrets` reaching it. */
  config: { host: string; port: number; database: string; user: string; ssl: 'disable' };
  secrets: { password: string };
  query<T = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** Creates a database of its own on the server the test app uses (127.0.0.1:5432). */
export async function createScratchDatabase(app: TestApp): Promise<ScratchDatabase> {
  const url = new URL(app.env.DATABASE_URL);
  const name = `reporting_web_${randomBytes(4).toString('hex')}`;
  await app.services.db.query(`CREATE DATABASE ${name}`);
  const client = new Client({ host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), database: name });
  await client.connect();
  return {
    name,
    config: { host: '127.0.0.1', port: Number(url.port || 5432), database: name, user: decodeURIComponent(url.username), ssl: 'disable' },
    secrets: { password: decodeURIComponent(url.password) || 'unused' },
    query: async <T,>(sql: string, values: unknown[] = []) => (await client.query(sql, values)).rows as T[],
    drop: async () => {
      await client.end();
      await app.services.db.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Whether a cron field (numbers, `*`, `a-b`, lists of them) takes `value`. */
function fieldTakes(field: string, value: number): boolean {
  return field.split(',').some((item) => {
    if (item === '*') return true;
    const [a, b] = item.split('-').map(Number);
    return b === undefined ? value === a : value >= a && value <= b;
  });
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/**
 * The first `count` minutes after `from` whose wall clock in `zone` the five-field expression takes
 * (numbers, `*`, ranges and lists only), found by looking at every minute for up to 40 days.
 */
export function nextMinutesMatching(cron: string, zone: string, from: Date, count: number): string[] {
  const [minute, hour, dom, month, dow] = cron.trim().split(/\s+/);
  const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', weekday: 'short' });
  const found: string[] = [];
  let at = Math.floor(from.getTime() / 60_000) * 60_000 + 60_000;
  for (let i = 0; i < 40 * 1440 && found.length < count; i++, at += 60_000) {
    const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
    if (
      fieldTakes(minute, Number(parts.minute)) &&
      fieldTakes(hour, Number(parts.hour)) &&
      fieldTakes(dom, Number(parts.day)) &&
      fieldTakes(month, Number(parts.month)) &&
      fieldTakes(dow, WEEKDAYS.indexOf(parts.weekday))
    ) {
      found.push(new Date(at).toISOString());
    }
  }
  return found;
}
