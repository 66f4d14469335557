import { generateKeyPairSync } from 'node:crypto';
import { AppError } from '../../../domain/errors';
import { openSealed, sealSecret } from '@formwork/wire';

const AAD = '7d3c2c64-4a43-4c55-9d0e-1d5f3f2b6a11:datasource:0b8f6a52-3a3b-4f53-8d0c-2a8a8d6c0e2f';
const SECRETS = JSON.stringify({ password: 'pä$$wörd "quoted"' });

const pem = (pair: ReturnType<typeof generateKeyPairSync>) => ({
  publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  privatePem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  privateKey: pair.privateKey,
});

const x25519 = () => pem(generateKeyPairSync('x25519'));
const rsa = () => pem(generateKeyPairSync('rsa', { modulusLength: 2048 }));

/** Flips one bit of the base64url part `index` (0-based, after `v1.<scheme>.`). */
function tamper(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index + 2], 'base64url');
  bytes[Math.floor(bytes.length / 2)] ^= 0x01;
  parts[index + 2] = bytes.toString('base64url');
  return parts.join('.');
}

function refused(open: () => string): AppError {
  try {
    open();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('opened what it should have refused');
}

describe('secrets sealed to an agent (packages/wire/src/sealed-box.ts)', () => {
  describe.each([
    ['X25519', x25519, 'x25519'],
    ['RSA', rsa, 'rsa-oaep-256'],
  ])('%s key', (_name, makeKey, scheme) => {
    const key = makeKey();
    const other = makeKey();

    it(`seals to v1.${scheme}.… without the plaintext and opens with the private key (PEM or KeyObject)`, () => {
      const sealed = sealSecret(key.publicPem, SECRETS, AAD);
      expect(sealed).toMatch(new RegExp(`^v1\\.${scheme}\\.[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
      expect(sealed).not.toContain('w\u00f6rd');
      expect(Buffer.from(sealed.split('.')[4], 'base64url').toString('latin1')).not.toContain('quoted');
      expect(openSealed(key.privatePem, sealed, AAD)).toBe(SECRETS);
      expect(openSealed(key.privateKey, sealed, AAD)).toBe(SECRETS);
      // A fresh key and IV every time: the same secret never seals alike.
      expect(sealSecret(key.publicPem, SECRETS, AAD)).not.toBe(sealed);
    });

    it('refuses another datasource or project (aad)', () => {
      const sealed = sealSecret(key.publicPem, SECRETS, AAD);
      expect(refused(() => openSealed(key.privatePem, sealed, AAD.replace(/^7/, '8'))).code).toBe('ERR_DS_002');
      expect(refused(() => openSealed(key.privatePem, sealed, `${AAD}x`)).code).toBe('ERR_DS_002');
    });

    it('refuses another private key', () => {
      const sealed = sealSecret(key.publicPem, SECRETS, AAD);
      expect(refused(() => openSealed(other.privatePem, sealed, AAD)).code).toBe('ERR_DS_002');
    });

    it('refuses a changed key part, IV or ciphertext, and malformed text', () => {
      const sealed = sealSecret(key.publicPem, SECRETS, AAD);
      for (const part of [0, 1, 2]) expect(refused(() => openSealed(key.privatePem, tamper(sealed, part), AAD)).code).toBe('ERR_DS_002');
      const parts = sealed.split('.');
      for (const bad of ['', 'v1', parts.slice(0, 4).join('.'), `v2.${parts.slice(1).join('.')}`, `${sealed}.x`, sealed.replace(/\.[^.]+$/, '.!!')]) {
        expect(refused(() => openSealed(key.privatePem, bad, AAD)).code).toBe('ERR_DS_002');
      }
      // The ciphertext's tag cut off.
      const short = [...parts.slice(0, 4), Buffer.from(parts[4], 'base64url').subarray(0, 8).toString('base64url')].join('.');
      expect(refused(() => openSealed(key.privatePem, short, AAD)).code).toBe('ERR_DS_002');
    });
  });

  it('refuses a scheme that does not match the key type', () => {
    const rsaKey = rsa();
    const xKey = x25519();
    const toRsa = sealSecret(rsaKey.publicPem, SECRETS, AAD);
    const toX = sealSecret(xKey.publicPem, SECRETS, AAD);
    expect(refused(() => openSealed(xKey.privatePem, toRsa, AAD)).code).toBe('ERR_DS_002');
    expect(refused(() => openSealed(rsaKey.privatePem, toX, AAD)).code).toBe('ERR_DS_002');
  });

  it('refuses to seal to a key that is neither RSA nor X25519, or not a key', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(refused(() => sealSecret(ec, SECRETS, AAD)).code).toBe('ERR_DS_002');
    expect(refused(() => sealSecret('not a key', SECRETS, AAD)).code).toBe('ERR_DS_002');
  });
});
