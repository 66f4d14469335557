import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';

const PDF = Buffer.from('%PDF-1.4\n% a stored document\n%%EOF\n');

/**
 * Signed download links are capabilities, not anonymous calls (docs/security.md, "Rate limits:
 * download links and retryAfter"): a valid link spends its project's RATE_LIMIT_FILE_LINKS budget,
 * so downloading a batch's documents is not held to the anonymous 30 a minute; a forged or
 * expired link is an anonymous request like any other.
 */
describe('rate limits: signed download links', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ smtp: false, worker: false, env: { RATE_LIMIT_ANONYMOUS: '2', RATE_LIMIT_FILE_LINKS: '6', TRUST_PROXY: '1' } });
  });
  afterAll(() => app.close());

  /** A document as a finished job leaves it: `documents/<projectId>/<jobId>.pdf`, and its signed link. */
  async function storedDocument(projectId: string): Promise<string> {
    const key = `documents/${projectId}/${randomUUID()}.pdf`;
    await app.services.storage.put(key, PDF, 'application/pdf');
    return (await app.services.storage.signedUrl(key, { ttlSeconds: 300, filename: 'invoice.pdf' })).url;
  }
  const get = (url: string, address: string) => fetch(url, { headers: { 'X-Forwarded-For': address } });

  it("downloads a batch's documents past the anonymous limit, on the project's own budget", async () => {
    const project = randomUUID();
    const links = await Promise.all(Array.from({ length: 6 }, () => storedDocument(project)));
    const remaining: string[] = [];
    for (const link of links) {
      const res = await fetch(link);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(PDF);
      expect(res.headers.get('x-ratelimit-limit')).toBe('6');
      remaining.push(res.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    // The project's budget is spent: the next download waits, with the wait in the body and the header.
    const limited = await fetch(await storedDocument(project));
    expect(limited.status).toBe(429);
    const body = await limited.json();
    expect(body).toMatchObject({ statusCode: 429, code: 'ERR_QUOTA_003', retryAfter: expect.any(Number), relatedInfo: { limit: 6 } });
    expect(limited.headers.get('retry-after')).toBe(String(body.retryAfter));
    // Another project's links have a budget of their own, and the caller's anonymous budget is untouched.
    expect((await fetch(await storedDocument(randomUUID()))).status).toBe(200);
    const anonymous = await app.request('GET', '/api/no-such-route');
    expect(anonymous.status).toBe(404);
    expect([anonymous.headers.get('x-ratelimit-limit'), anonymous.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
  });

  it('counts forged and edited links as anonymous requests of the client', async () => {
    const key = `documents/${randomUUID()}/${randomUUID()}.pdf`;
    await app.services.storage.put(key, PDF, 'application/pdf');
    const good = new URL((await app.services.storage.signedUrl(key, { ttlSeconds: 300 })).url);
    const forged = new URL(good);
    forged.searchParams.set('signature', 'A'.repeat(good.searchParams.get('signature')?.length ?? 43));
    const otherKey = new URL(good);
    otherKey.pathname = `/api/files/documents/${randomUUID()}/${randomUUID()}.pdf`;
    const address = '198.51.100.7';
    const first = await get(forged.href, address);
    expect([first.status, first.headers.get('x-ratelimit-limit')]).toEqual([403, '2']);
    expect((await get(otherKey.href, address)).status).toBe(403);
    const limited = await get(forged.href, address);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ code: 'ERR_QUOTA_003', retryAfter: expect.any(Number) });
    // The same client still downloads with the real link: that spends the project's budget, not its own.
    const real = await get(good.href, address);
    expect([real.status, real.headers.get('x-ratelimit-limit')]).toEqual([200, '6']);
  });
});
