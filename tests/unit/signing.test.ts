import { createHmac } from 'node:crypto';
import {
  encodeUrlPath,
  randomBase62,
  randomToken,
  sha256Hex,
  signUrlPath,
  verifySignedUrl,
  verifyWebhookSignature,
  webhookSignature,
} from '../../domain/signing';

const SECRET = 'test-secret-with-enough-entropy-0123456789';

function queryOf(signed: string): Record<string, string> {
  return Object.fromEntries(new URL(signed, 'http://x').searchParams);
}

describe('signed download URLs', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const expiresAt = new Date(now.getTime() + 60_000);

  it('round-trips a signed path with its filename', () => {
    const signed = signUrlPath(SECRET, '/api/files/jobs/a b.pdf', { expiresAt, filename: 'Rechnung März.pdf' });
    expect(signed.startsWith('/api/files/jobs/a%20b.pdf?expires=')).toBe(true);
    const result = verifySignedUrl(SECRET, '/api/files/jobs/a b.pdf', queryOf(signed), now);
    expect(result).toEqual({ ok: true, expiresAt: new Date('2030-01-01T00:01:00Z'), filename: 'Rechnung März.pdf' });
  });

  it('reports an expired link only when the signature is right', () => {
    const query = queryOf(signUrlPath(SECRET, '/p', { expiresAt }));
    const later = new Date(expiresAt.getTime() + 1);
    expect(verifySignedUrl(SECRET, '/p', query, later)).toEqual({ ok: false, reason: 'expired' });
    expect(verifySignedUrl(SECRET, '/p', { ...query, signature: '0'.repeat(64) }, later)).toEqual({
      ok: false,
      reason: 'invalid',
    });
  });

  it.each([
    ['another path', '/q', {}],
    ['an edited expiry', '/p', { expires: '9999999999' }],
    ['an added filename', '/p', { filename: 'other.pdf' }],
    ['a truncated signature', '/p', { signature: 'abc' }],
    ['a repeated signature', '/p', { signature: ['a', 'b'] }],
    ['a missing expiry', '/p', { expires: undefined }],
  ])('refuses %s', (_label, path, override) => {
    const query = { ...queryOf(signUrlPath(SECRET, '/p', { expiresAt })), ...override };
    expect(verifySignedUrl(SECRET, path, query, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses a link signed with another secret', () => {
    const query = queryOf(signUrlPath('other-secret', '/p', { expiresAt }));
    expect(verifySignedUrl(SECRET, '/p', query, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('encodes each segment but keeps separators', () => {
    expect(encodeUrlPath('/a b/c?d#e')).toBe('/a%20b/c%3Fd%23e');
  });
});

describe('webhook signatures', () => {
  const body = '{"event":"flow.run.completed","run":{"id":"r1"}}';

  it('is v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>"', () => {
    const expected = createHmac('sha256', SECRET).update(`1700000000.${body}`).digest('hex');
    expect(webhookSignature(SECRET, 1700000000, body)).toBe(`v1=${expected}`);
    expect(webhookSignature(SECRET, '1700000000', Buffer.from(body))).toBe(`v1=${expected}`);
  });

  it('verifies within the tolerance and refuses outside it', () => {
    const ts = 1700000000;
    const header = webhookSignature(SECRET, ts, body);
    const at = (s: number) => ({ now: new Date(s * 1000) });
    expect(verifyWebhookSignature(SECRET, ts, body, header, at(ts + 10))).toBe(true);
    expect(verifyWebhookSignature(SECRET, ts, body, header, at(ts + 301))).toBe(false);
    expect(verifyWebhookSignature(SECRET, ts, body, header, { toleranceSeconds: 0, now: new Date(0) })).toBe(true);
  });

  it('refuses a changed body, timestamp or secret, and accepts any of several v1 values', () => {
    const ts = Math.floor(Date.now() / 1000);
    const header = webhookSignature(SECRET, ts, body);
    expect(verifyWebhookSignature(SECRET, ts, `${body} `, header)).toBe(false);
    expect(verifyWebhookSignature(SECRET, ts - 1, body, header)).toBe(false);
    expect(verifyWebhookSignature('other', ts, body, header)).toBe(false);
    expect(verifyWebhookSignature(SECRET, ts, body, `v1=${'0'.repeat(64)}, ${header}`)).toBe(true);
    expect(verifyWebhookSignature(SECRET, ts, body, header.toUpperCase())).toBe(false);
  });
});

describe('secrets', () => {
  it('hashes with SHA-256 in lowercase hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('draws base62 strings of the asked length, all different', () => {
    const values = Array.from({ length: 200 }, () => randomBase62(32));
    for (const v of values) expect(v).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(new Set(values).size).toBe(values.length);
    const all = values.join('');
    // 6,400 draws over 62 symbols: every symbol shows up, or the alphabet is wrong.
    expect(new Set(all).size).toBe(62);
  });

  it('makes URL-safe tokens carrying the given entropy', () => {
    expect(randomToken()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(randomToken(16), 'base64url')).toHaveLength(16);
  });
});
