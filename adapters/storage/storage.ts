import type { Readable } from 'node:stream';

/**
 * The artefact storage port: rendered documents go in under a key chosen by the caller
 * (e.g. `documents/<teamId>/<jobId>.pdf`) and come out through a signed, expiring URL.
 * Workflows pass keys around, never bytes.
 */
export interface ArtefactStorage {
  put(key: string, body: Buffer | Readable, contentType: string): Promise<void>;
  /** Throws AppError ERR_FILE_001 when nothing is stored under the key. */
  get(key: string): Promise<StoredObject>;
  /** Idempotent: deleting a missing key succeeds. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Does not check that the object exists; a link to a missing key answers 404 when used. */
  signedUrl(key: string, options: SignedUrlOptions): Promise<SignedUrl>;
  /** Health probe: resolves when the store can be written and read. */
  check(): Promise<void>;
}

export interface StoredObject {
  body: Readable;
  contentType: string;
  size: number;
}

export interface SignedUrlOptions {
  ttlSeconds: number;
  /** Name the browser saves the download under. */
  filename?: string;
}

export interface SignedUrl {
  url: string;
  expiresAt: Date;
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 512;

/**
 * Keys are relative paths of plain segments. Refusing `.`-leading segments rules out `..`
 * traversal and leaves names starting with a dot free for an adapter's own bookkeeping
 * (the local adapter keeps metadata and temporary files there). Both adapters apply the same
 * rule so a key that works locally also works on S3.
 */
export function isValidStorageKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  return key.split('/').every((segment) => SEGMENT.test(segment));
}

export function assertValidStorageKey(key: string): void {
  if (!isValidStorageKey(key)) throw new TypeError(`Invalid storage key: ${JSON.stringify(key)}`);
}

/** The last segment of a key: the download name when the caller gives none. */
export function keyBasename(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/**
 * `attachment` Content-Disposition with an ASCII fallback name and the exact UTF-8 name
 * (RFC 6266 / RFC 5987), so non-ASCII file names survive every browser.
 */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
