import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';

/** TRUST_PROXY hops (docs/security.md, "Credentials: brute force and client addresses"). */
describe('client address behind TRUST_PROXY=1', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ smtp: false, worker: false, env: { TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '3' } });
  });
  afterAll(() => app.close());

  const from = (xff: string) => app.request('GET', '/api/no-such-route', { headers: { 'X-Forwarded-For': xff } });

  it('counts the address the proxy appended, not what the client put in front of it', async () => {
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      // The client rotates its own X-Forwarded-For entries; the proxy appends the real address.
      const res = await from(`10.0.0.${i}, 198.51.100.${i}, 192.0.2.10`);
      expect(res.status).toBe(404);
      remaining.push(res.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await from('203.0.113.99, 192.0.2.10');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('ERR_QUOTA_003');

    const other = await from('192.0.2.10, 192.0.2.11');
    expect(other.status).toBe(404);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('groups IPv6 clients by /64, however they write the address', async () => {
    const statuses = [];
    for (const ip of ['2001:db8:aa:1::1', '2001:0db8:00aa:0001:ffff:1:2:3', '2001:db8:aa:1:abcd::9', '2001:DB8:AA:1::77'])
      statuses.push((await from(ip)).status);
    expect(statuses).toEqual([404, 404, 404, 429]);

    const nextNetwork = await from('2001:db8:aa:2::1');
    expect(nextNetwork.status).toBe(404);
    expect(nextNetwork.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('treats an IPv4-mapped IPv6 address as the IPv4 address', async () => {
    expect((await from('192.0.2.77')).headers.get('x-ratelimit-remaining')).toBe('2');
    expect((await from('::ffff:192.0.2.77')).headers.get('x-ratelimit-remaining')).toBe('1');
  });

  it('keeps hostile values bounded: an overlong or garbage entry is one more key, not an error', async () => {
    const res = await from(`${'a'.repeat(5000)}, not-an-address-${'x'.repeat(500)}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
  });
});

describe('client address behind TRUST_PROXY=2', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ smtp: false, worker: false, env: { TRUST_PROXY: '2', RATE_LIMIT_ANONYMOUS: '2' } });
  });
  afterAll(() => app.close());

  it('takes the entry the outer of the two proxies wrote', async () => {
    const h = (xff: string) => app.request('GET', '/api/no-such-route', { headers: { 'X-Forwarded-For': xff } });
    expect((await h('1.1.1.1, 198.51.100.20, 10.0.0.2')).headers.get('x-ratelimit-remaining')).toBe('1');
    // Same client behind a different inner proxy, with another spoofed prefix: the same budget.
    expect((await h('2.2.2.2, 198.51.100.20, 10.0.0.3')).headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await h('198.51.100.20, 10.0.0.3')).status).toBe(429);
  });
});

describe('X-Forwarded-Proto in production', () => {
  const productionEnv = { NODE_ENV: 'production', ENCRYPTION_KEY: randomBytes(32).toString('base64') };

  it('is read only from the trusted proxy: its own (rightmost) value decides, not one the client sent', async () => {
    const app = await startTestApp({ worker: false, env: { ...productionEnv, TRUST_PROXY: '1' } });
    try {
      const viaTls = await app.request('GET', '/api/no-such-route', { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(viaTls.status).toBe(404);
      // The client sent "https" itself over plain HTTP; the proxy appended what it really saw.
      const spoofed = await app.request('GET', '/api/no-such-route', { headers: { 'X-Forwarded-Proto': 'https, http' } });
      expect(spoofed.status).toBe(400);
      expect(spoofed.body.code).toBe('ERR_REQ_004');
    } finally {
      await app.close();
    }
  });

  it('is ignored without TRUST_PROXY', async () => {
    const app = await startTestApp({ worker: false, env: { ...productionEnv, TRUST_PROXY: 'false' } });
    try {
      const res = await app.request('GET', '/api/no-such-route', { headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '192.0.2.1' } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ERR_REQ_004');
    } finally {
      await app.close();
    }
  });
});
