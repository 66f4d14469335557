import {
  constants,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { AppError } from './errors';

/**
 * Secrets sealed to an agent (docs/reporting.md "Datasources behind an agent"; docs/agent.md
 * "Secrets as the agent sees them"): the service encrypts a datasource's secrets to the public key the agent
 * registered, stores only the sealed text, and only the agent, holding the private key, can open it. Hybrid encryption:
 * a random AES-256-GCM key and 96-bit IV encrypt the plaintext with `aad` as associated data (so a sealed value
 * copied to another datasource or project fails to open), and that key reaches the agent
 *
 * - for an RSA key: wrapped with RSA-OAEP (SHA-256): `v1.rsa-oaep-256.<wrapped key>.<iv>.<ciphertext+tag>`;
 * - for an X25519 key: derived from an ephemeral X25519 key agreement through HKDF-SHA256 (info
 *   `formwork-sealed-v1`, salt = the ephemeral public key's 32 raw bytes):
 *   `v1.x25519.<ephemeral public key, raw>.<iv>.<ciphertext+tag>`.
 *
 * Every part is base64url. A wrong key, a changed byte or another `aad` throws ERR_DS_002.
 */

const RSA_SCHEME = 'rsa-oaep-256';
const X25519_SCHEME = 'x25519';
const HKDF_INFO = 'formwork-sealed-v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

const cannotOpen = (why: string) =>
  new AppError('ERR_DS_002', `The sealed secret cannot be opened with this key (${why}); enter the datasource's secret again`, { field: 'secrets' });

function rawX25519(key: KeyObject): Buffer {
  const { x } = key.export({ format: 'jwk' });
  return Buffer.from(x as string, 'base64url');
}

function x25519FromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: raw.toString('base64url') }, format: 'jwk' });
}

function x25519Key(ephemeralPrivate: KeyObject, recipientPublic: KeyObject, ephemeralPublicRaw: Buffer): Buffer {
  const shared = diffieHellman({ privateKey: ephemeralPrivate, publicKey: recipientPublic });
  return Buffer.from(hkdfSync('sha256', shared, ephemeralPublicRaw, HKDF_INFO, KEY_BYTES));
}

/** Seals `plaintext` to the RSA or X25519 public key `publicKeyPem` (SPKI PEM); throws ERR_DS_002 for any other key. */
export function sealSecret(publicKeyPem: string, plaintext: string, aad: string): string {
  let recipient: KeyObject;
  try {
    recipient = createPublicKey(publicKeyPem);
  } catch {
    throw new AppError('ERR_DS_002', 'The agent public key is not a PEM public key', { field: 'publicKey' });
  }
  let scheme: string;
  let keyPart: Buffer;
  let aesKey: Buffer;
  if (recipient.asymmetricKeyType === 'rsa') {
    scheme = RSA_SCHEME;
    aesKey = randomBytes(KEY_BYTES);
    keyPart = publicEncrypt({ key: recipient, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey);
  } else if (recipient.asymmetricKeyType === 'x25519') {
    scheme = X25519_SCHEME;
    const ephemeral = generateKeyPairSync('x25519');
    keyPart = rawX25519(ephemeral.publicKey);
    aesKey = x25519Key(ephemeral.privateKey, recipient, keyPart);
  } else {
    throw new AppError('ERR_DS_002', 'The agent public key must be RSA or X25519', { field: 'publicKey' });
  }
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', aesKey, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return ['v1', scheme, keyPart.toString('base64url'), iv.toString('base64url'), sealed.toString('base64url')].join('.');
}

/** Opens what sealSecret sealed to the public half of `privateKey` (a KeyObject or PKCS8 PEM) under the same `aad`. */
export function openSealed(privateKey: KeyObject | string, sealed: string, aad: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1' || parts.slice(2).some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) throw cannotOpen('malformed');
  const [, scheme, keyText, ivText, bodyText] = parts;
  let key: KeyObject;
  try {
    key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  } catch {
    throw cannotOpen('the private key cannot be read');
  }
  const keyPart = Buffer.from(keyText, 'base64url');
  const iv = Buffer.from(ivText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw cannotOpen('malformed');
  let aesKey: Buffer;
  try {
    if (scheme === RSA_SCHEME && key.asymmetricKeyType === 'rsa') {
      aesKey = privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, keyPart);
    } else if (scheme === X25519_SCHEME && key.asymmetricKeyType === 'x25519') {
      if (keyPart.length !== KEY_BYTES) throw new Error('ephemeral key');
      aesKey = x25519Key(key, x25519FromRaw(keyPart), keyPart);
    } else {
      throw cannotOpen(`sealed with ${scheme}, the key is ${key.asymmetricKeyType ?? 'unknown'}`);
    }
    if (aesKey.length !== KEY_BYTES) throw new Error('key size');
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw cannotOpen('the key was sealed to another key');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', aesKey, iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw cannotOpen('wrong key, changed text or another datasource');
  }
}

/** The associated data a datasource's sealed secret is bound to (docs/agent.md): it opens for that datasource of that project only. */
export const sealedSecretAad = (projectId: string, datasourceId: string) => `${projectId}:datasource:${datasourceId}`;
