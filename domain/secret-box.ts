import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (docs/security.md, "Credentials: secrets at rest"): TOTP seeds, webhook and
 * delivery-channel signing secrets, channel header values and `renderConfig.secret` are stored as
 * AES-256-GCM ciphertext under the application key (ENCRYPTION_KEY).
 *
 * Stored form: `enc:v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64url parts). The key id is the first
 * 8 hex digits of SHA-256 of the key, so a value names the key that opens it and rotation can
 * tell old ciphertext from new. A value without the `enc:v1:` prefix is a plaintext row written
 * before encryption existed: it is read as is and encrypted by the start-up step
 * (db/secrets-at-rest.ts, `encryptStoredSecrets`).
 */

export const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface Keyring {
  /** Encrypts every new value. */
  current: EncryptionKey;
  /** Decrypts: the current key and every previous one, by key id. */
  byId: Map<string, EncryptionKey>;
}

/** A 32-byte key from its base64 text, or undefined when the text is not one. */
export function decodeKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === 32 ? key : undefined;
}

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function generateKeyText(): string {
  return randomBytes(32).toString('base64');
}

/** The keyring of a current key and the previous keys that may still open old ciphertext. */
export function createKeyring(current: Buffer, previous: Buffer[] = []): Keyring {
  const entry = (key: Buffer): EncryptionKey => ({ id: keyId(key), key });
  const byId = new Map<string, EncryptionKey>();
  for (const k of [...previous, current]) byId.set(keyId(k), entry(k));
  return { current: entry(current), byId };
}

function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

export function seal(keyring: Keyring, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `${SEALED_PREFIX}${keyring.current.id}:${iv.toString('base64url')}:${tag.toString('base64url')}:${ct.toString('base64url')}`;
}

export class SecretDecryptionError extends Error {
  constructor(detail: string) {
    super(`A stored secret cannot be decrypted: ${detail}`);
    this.name = 'SecretDecryptionError';
  }
}

/** The plaintext of a stored value; a legacy plaintext value (no prefix) comes back unchanged. */
export function unseal(keyring: Keyring, stored: string): string {
  if (!isSealed(stored)) return stored;
  const [id, iv, tag, ct, ...rest] = stored.slice(SEALED_PREFIX.length).split(':');
  if (ct === undefined || rest.length > 0) throw new SecretDecryptionError('malformed ciphertext');
  const key = keyring.byId.get(id);
  if (!key) throw new SecretDecryptionError(`key ${id} is not configured (ENCRYPTION_KEY / ENCRYPTION_KEY_PREVIOUS)`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError(`ciphertext under key ${id} fails its authentication tag`);
  }
}

/**
 * The process's keyring, installed once at start-up (platform/services.ts, scripts/admin.ts) from the
 * configuration. TypeORM column transformers are synchronous and global, so they read it here. A
 * process that installs several keyrings (tests run several apps in one process) keeps every key
 * for decryption and encrypts with the last one installed.
 */
let active: Keyring | undefined;

export function installKeyring(keyring: Keyring): void {
  const byId = new Map(active?.byId ?? []);
  for (const [id, k] of keyring.byId) byId.set(id, k);
  active = { current: keyring.current, byId };
}

export function activeKeyring(): Keyring {
  if (!active) throw new Error('No encryption key installed: call installKeyring (platform/services.ts does) before touching secrets');
  return active;
}

export const sealSecret = (plaintext: string): string => seal(activeKeyring(), plaintext);
export const unsealSecret = (stored: string): string => unseal(activeKeyring(), stored);

/** Maps the string values of a header map (channel headers are secrets too: they often carry API keys). */
export function mapHeaderValues(headers: Record<string, string> | null | undefined, f: (v: string) => string): Record<string, string> | undefined {
  if (!headers) return undefined;
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, typeof value === 'string' ? f(value) : value]));
}
