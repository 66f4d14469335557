import { sha256Hex } from './signing';

/** An Idempotency-Key: 1 to 255 visible ASCII characters (no space, no control character). */
const KEY = /^[\x21-\x7e]{1,255}$/;

export function isValidIdempotencyKey(value: string): boolean {
  return KEY.test(value);
}

/** JSON with object keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface FingerprintInput {
  method: string;
  /** The path (route parameters included) and the query string. */
  path: string;
  projectId: string;
  body: unknown;
}

/** What makes two requests "the same" for a key: method, path, the credential's project and the canonical body. */
export function requestFingerprint(input: FingerprintInput): string {
  const bodyHash = sha256Hex(canonicalJson(input.body ?? null));
  return sha256Hex(JSON.stringify([input.method.toUpperCase(), input.path, input.projectId, bodyHash]));
}
