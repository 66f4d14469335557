import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import type { ObjectSchema, Property } from '../domain/flow/gate.types';

/**
 * The honest gate of the benchmarks (bench-validate, bench-hostile): 20 fields of every kind and
 * 5 business rules, with a payload that passes all of them.
 */

/** 20 fields of every kind, nested object and array included. */
export function benchSchema(): ObjectSchema {
  const properties: Record<string, Property> = {
    customer: { type: 'string', required: true, minLength: 2, maxLength: 100 },
    email: { type: 'string', required: true, format: 'email' },
    website: { type: 'string', format: 'url' },
    issued: { type: 'string', required: true, format: 'date' },
    due: { type: 'string', format: 'date-time' },
    reference: { type: 'string', format: 'uuid' },
    code: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
    total: { type: 'number', required: true, min: 0 },
    discount: { type: 'number', min: 0, max: 100 },
    quantity: { type: 'integer', min: 1 },
    paid: { type: 'boolean' },
    notes: { type: 'string', maxLength: 2000 },
    address: { type: 'object', properties: { street: { type: 'string', required: true }, city: { type: 'string', required: true }, zip: { type: 'string', pattern: '^\\d{5}$' } } },
    items: { type: 'array', required: true, minLength: 1, maxLength: 100, items: { type: 'object', properties: { sku: { type: 'string', required: true }, price: { type: 'number', min: 0 }, qty: { type: 'integer', min: 1 } } } },
    tags: { type: 'array', items: { type: 'string', maxLength: 30 } },
    priority: { type: 'integer', enum: [1, 2, 3] },
    region: { type: 'string', enum: ['north', 'south', 'east', 'west'] },
    vat: { type: 'number', min: 0, max: 50 },
    approved: { type: 'boolean' },
  };
  return { type: 'object', properties };
}

export const BENCH_RULES = [
  { id: 'total-matches', expression: '$abs($sum(items.(price * qty)) - total) < 0.01', message: 'total must equal the items' },
  { id: 'discount-cap', expression: 'discount <= 50 or paid = true', message: 'discount above 50% needs payment' },
  { id: 'due-after-issue', expression: '$not($exists(due)) or $substring(due, 0, 10) >= issued', message: 'due before issue date' },
  { id: 'eur-vat', expression: "currency != 'EUR' or vat >= 0", message: 'EUR invoices need VAT' },
  { id: 'item-count', expression: '$count(items) <= 100', message: 'too many items' },
];

export const BENCH_PAYLOAD = {
  customer: 'Ada Lovelace',
  email: 'ada@example.com',
  website: 'https://example.com',
  issued: '2026-01-10',
  due: '2026-02-10T00:00:00Z',
  reference: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  code: 'INV-2026',
  currency: 'EUR',
  total: 65,
  discount: 10,
  quantity: 3,
  paid: false,
  notes: 'Thanks for your business',
  address: { street: '1 Analytical Way', city: 'London', zip: '12345' },
  items: [
    { sku: 'A', price: 10, qty: 2 },
    { sku: 'B', price: 15, qty: 3 },
  ],
  tags: ['q1', 'priority'],
  priority: 2,
  region: 'north',
  vat: 20,
  approved: true,
};

/** The environment a benchmark's in-process service runs with: its own database, data dir and task queues, no rate limits. */
export function benchEnv(opts: { dataDir: string; databaseUrl: string; port: number; temporalAddress: string }): Record<string, string | undefined> {
  return {
    ...process.env,
    NODE_ENV: 'development',
    PORT: String(opts.port),
    HOST: '127.0.0.1',
    DATA_DIR: opts.dataDir,
    DATABASE_URL: opts.databaseUrl,
    DATABASE_POOL_SIZE: '10',
    TEMPORAL_ADDRESS: opts.temporalAddress,
    TEMPORAL_TASK_QUEUE_PREFIX: `bench-${randomBytes(3).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    RATE_LIMIT_API_KEY: '1000000000',
    RATE_LIMIT_JWT: '1000000000',
    RATE_LIMIT_ANONYMOUS: '1000000000',
  };
}

/** A fresh database for one benchmark run on BENCH_DATABASE_ADMIN_URL's server, and its removal. */
export async function benchDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `formwork_bench_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new PgClient({ connectionString: adminUrl });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
