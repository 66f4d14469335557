import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../domain/config';
import { createKeyring, decodeKey, generateKeyText, installKeyring, type Keyring } from '../domain/secret-box';

/** Where a development key is kept when ENCRYPTION_KEY is unset (never in production: loadConfig requires it there). */
export const ENCRYPTION_KEY_FILE = 'encryption-key';

/**
 * The keyring of secrets at rest from the configuration, installed for the process's column
 * transformers. Outside production a missing ENCRYPTION_KEY is generated once and kept under
 * DATA_DIR, the way the JWT secret is (platform/services.ts): every role started on the same
 * DATA_DIR shares it.
 */
export async function loadKeyring(config: Pick<Config, 'encryption' | 'dataDir'>): Promise<Keyring> {
  const text = config.encryption.key ?? (await persistedKey(config.dataDir));
  const current = decodeKey(text);
  if (!current) throw new Error(`${join(config.dataDir, ENCRYPTION_KEY_FILE)} does not hold a base64 32-byte key`);
  const keyring = createKeyring(current, config.encryption.previousKeys.map((k) => decodeKey(k)!));
  installKeyring(keyring);
  return keyring;
}

async function persistedKey(dataDir: string): Promise<string> {
  const file = join(dataDir, ENCRYPTION_KEY_FILE);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, generateKeyText(), { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await readFile(file, 'utf8')).trim();
  }
}
