import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * Signatures and secrets shared by the API, the worker and the tests: signed download URLs for
 * locally stored artefacts, webhook signatures (spec, Events), and random secrets for API keys
 * and one-time tokens. node:crypto only, so it stays usable from every layer.
 */

const HEX_SHA256 = /^[0-9a-f]{64}$/;

function hmacHex(secret: string | Buffer, text: string | Buffer): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

/** Compares two hex digests without leaking, through timing, how much of a guess was right. */
function sameHex(expected: string, given: string): boolean {
  if (!HEX_SHA256.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(given, 'hex'));
}

// --- signed download URLs ---

export interface SignUrlOptions {
  /** When the link stops working; rounded down to whole seconds (the `expires` query value). */
  expiresAt: Date;
  /** Download name bound into the signature, so a link cannot be re-labelled by editing it. */
  filename?: string;
}

export type SignedUrlCheck =
  | { ok: true; expiresAt: Date; filename?: string }
  | { ok: false; reason: 'invalid' | 'expired' };

/**
 * JSON keeps the fields unambiguous whatever characters the path or filename hold (a naive
 * `path|expires` join would let `a|1` + `2` collide with `a` + `1|2`).
 */
function urlPayload(path: string, expires: number, filename: string | undefined): string {
  return JSON.stringify(['GET', path, expires, filename ?? null]);
}

/** Percent-encodes each path segment, keeping the slashes that separate them. */
export function encodeUrlPath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * Signs a decoded URL path (e.g. `/api/files/jobs/42.pdf`) and returns it percent-encoded with
 * the query that proves it: `expires` (Unix seconds), `filename` when given, and `signature`.
 * The verifier is handed the decoded path again, so encoding differences never break a link.
 */
export function signUrlPath(secret: string, path: string, options: SignUrlOptions): string {
  const expires = Math.floor(options.expiresAt.getTime() / 1000);
  const query = new URLSearchParams({ expires: String(expires) });
  if (options.filename !== undefined) query.set('filename', options.filename);
  query.set('signature', hmacHex(secret, urlPayload(path, expires, options.filename)));
  return `${encodeUrlPath(path)}?${query.toString()}`;
}

function single(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return undefined;
}

/**
 * Checks a signed URL's query against its decoded path. The signature is checked before the
 * expiry so that an edited `expires` reads as tampering, not as an expired link.
 * Repeated query parameters are refused: only one reading of a URL may be signed.
 */
export function verifySignedUrl(
  secret: string,
  path: string,
  query: Record<string, unknown>,
  now: Date = new Date(),
): SignedUrlCheck {
  const expiresText = single(query.expires);
  const signature = single(query.signature);
  const filename = query.filename === undefined ? undefined : single(query.filename);
  if (!expiresText || !/^\d{1,12}$/.test(expiresText) || !signature) return { ok: false, reason: 'invalid' };
  if (query.filename !== undefined && filename === undefined) return { ok: false, reason: 'invalid' };
  const expires = Number(expiresText);
  if (!sameHex(hmacHex(secret, urlPayload(path, expires, filename)), signature)) {
    return { ok: false, reason: 'invalid' };
  }
  if (now.getTime() >= expires * 1000) return { ok: false, reason: 'expired' };
  return { ok: true, expiresAt: new Date(expires * 1000), filename };
}

// --- webhook signatures (spec, Events: `v1=` + hex HMAC-SHA256 over `<timestamp>.<raw body>`) ---

export function webhookSignature(secret: string, timestamp: number | string, rawBody: string | Buffer): string {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return `v1=${hmacHex(secret, Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), body]))}`;
}

export interface VerifyWebhookOptions {
  /** Refuse timestamps further than this from `now` (replay window); 0 disables the check. */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Verifies an `X-Service-Signature` header. Several space- or comma-separated `v1=` values are
 * accepted so a receiver keeps working while a sender rotates its secret.
 */
export function verifyWebhookSignature(
  secret: string,
  timestamp: number | string,
  rawBody: string | Buffer,
  signatureHeader: string,
  options: VerifyWebhookOptions = {},
): boolean {
  const tolerance = options.toleranceSeconds ?? 300;
  const ts = Number(timestamp);
  if (!Number.isInteger(ts)) return false;
  if (tolerance > 0) {
    const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
    if (Math.abs(nowSeconds - ts) > tolerance) return false;
  }
  const expected = webhookSignature(secret, timestamp, rawBody).slice(3);
  let match = false;
  for (const part of signatureHeader.split(/[\s,]+/)) {
    // Every candidate is compared, so the time taken does not reveal which one matched.
    if (part.startsWith('v1=') && sameHex(expected, part.slice(3))) match = true;
  }
  return match;
}

// --- secrets ---

/** Lowercase hex SHA-256; how API keys and one-time tokens are stored (never the plain text). */
export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A random URL-safe token (base64url) carrying `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from [0-9A-Za-z] (randomInt avoids modulo bias). */
export function randomBase62(length: number): string {
  if (!Number.isInteger(length) || length < 0) throw new RangeError('length must be a non-negative integer');
  let out = '';
  for (let i = 0; i < length; i += 1) out += BASE62[randomInt(BASE62.length)];
  return out;
}
