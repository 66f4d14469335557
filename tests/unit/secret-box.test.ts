import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../domain/config';
import { createKeyring, keyId, seal, SecretDecryptionError, unseal } from '../../domain/secret-box';
import { ENCRYPTION_KEY_FILE, loadKeyring } from '../../platform/encryption-keys';

const key = () => randomBytes(32);

describe('secrets at rest: AES-256-GCM with a key id (domain/secret-box.ts)', () => {
  it('seals to enc:v1:<keyId>:… without the plaintext, and opens it again', () => {
    const k = key();
    const ring = createKeyring(k);
    const sealed = seal(ring, 'whsec_very_secret_value');
    expect(sealed).toMatch(new RegExp(`^enc:v1:${keyId(k)}:[\\w-]+:[\\w-]+:[\\w-]+$`));
    expect(sealed).not.toContain('very_secret');
    expect(unseal(ring, sealed)).toBe('whsec_very_secret_value');
    // A fresh IV each time: equal secrets never look alike at rest.
    expect(seal(ring, 'whsec_very_secret_value')).not.toBe(sealed);
    expect(unseal(ring, seal(ring, ''))).toBe('');
    expect(unseal(ring, seal(ring, 'ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('reads a legacy plaintext value as is (the start-up step encrypts it)', () => {
    expect(unseal(createKeyring(key()), 'JBSWY3DPEHPK3PXP')).toBe('JBSWY3DPEHPK3PXP');
  });

  it('refuses tampered ciphertext, malformed values and unknown keys', () => {
    const ring = createKeyring(key());
    const sealed = seal(ring, 'secret-value');
    const parts = sealed.split(':');
    const ct = Buffer.from(parts[5], 'base64url');
    ct[0] ^= 1;
    const tampered = [...parts.slice(0, 5), ct.toString('base64url')].join(':');
    expect(() => unseal(ring, tampered)).toThrow(SecretDecryptionError);
    expect(() => unseal(ring, 'enc:v1:abc')).toThrow(/malformed/);
    expect(() => unseal(createKeyring(key()), sealed)).toThrow(/key [0-9a-f]{8} is not configured/);
  });

  it('opens ciphertext of a previous key and seals with the current one (rotation)', () => {
    const [oldKey, newKey] = [key(), key()];
    const old = seal(createKeyring(oldKey), 'rotate-me');
    const ring = createKeyring(newKey, [oldKey]);
    expect(unseal(ring, old)).toBe('rotate-me');
    expect(seal(ring, 'x').startsWith(`enc:v1:${keyId(newKey)}:`)).toBe(true);
    expect(() => unseal(createKeyring(newKey), old)).toThrow(SecretDecryptionError);
  });
});

describe('ENCRYPTION_KEY settings', () => {
  const production = { NODE_ENV: 'production', JWT_SECRET: 'a3F9kQ2mZ7xW1pR8tY4uV6bN0cL5jH2g', SMTP_URL: 'smtp://mail.example.com:25' };

  it('is required in production', () => {
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/^Invalid configuration: ENCRYPTION_KEY is required in production/);
    const k = randomBytes(32).toString('base64');
    expect(loadConfig({ ...production, ENCRYPTION_KEY: k }).encryption).toEqual({ key: k, previousKeys: [] });
  });

  it('must be base64 of exactly 32 bytes, previous keys too', () => {
    for (const bad of ['short', randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'not base64 at all!!', '']) {
      expect(() => loadConfig({ ENCRYPTION_KEY: bad })).toThrow(/ENCRYPTION_KEY/);
    }
    const good = randomBytes(32).toString('base64');
    expect(() => loadConfig({ ENCRYPTION_KEY: good, ENCRYPTION_KEY_PREVIOUS: `${good},nope` })).toThrow(/^Invalid configuration: ENCRYPTION_KEY_PREVIOUS/);
    const previous = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64url')];
    expect(loadConfig({ ENCRYPTION_KEY: good, ENCRYPTION_KEY_PREVIOUS: ` ${previous[0]} , ${previous[1]} ` }).encryption.previousKeys).toEqual(previous);
  });

  it('outside production, is generated once under DATA_DIR (mode 0600) and reused', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'formwork-key-'));
    try {
      const config = loadConfig({ DATA_DIR: dataDir });
      const first = await loadKeyring(config);
      const file = join(dataDir, ENCRYPTION_KEY_FILE);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
      const second = await loadKeyring(config);
      expect(second.current.id).toBe(first.current.id);
      // A configured key wins over the file.
      const configured = await loadKeyring(loadConfig({ DATA_DIR: dataDir, ENCRYPTION_KEY: randomBytes(32).toString('base64') }));
      expect(configured.current.id).not.toBe(first.current.id);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
