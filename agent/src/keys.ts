import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmod, mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentExit } from './exit';

export interface AgentKey {
  privateKey: KeyObject;
  /** SPKI PEM: sent as `publicKey` when a session opens; the service seals datasource secrets to it. */
  publicKeyPem: string;
}

/**
 * The agent's X25519 key pair (docs/agent.md "The key file"): read from `path` (PKCS8 PEM), or created on
 * the first start and written there with mode 0600 in a directory of mode 0700. An RSA key placed
 * there works too. The service keeps the first public key it was sent: a new key file makes it
 * answer 409 ERR_AGENT_010 until an admin clears the agent's key.
 */
export async function loadOrCreateKey(path: string): Promise<AgentKey & { created: boolean }> {
  let pem: string | undefined;
  try {
    pem = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new AgentExit(`Cannot read the key file ${path}: ${(err as Error).message}`);
  }
  if (pem !== undefined) {
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(pem);
    } catch {
      throw new AgentExit(`The key file ${path} holds no PEM private key`);
    }
    if (privateKey.asymmetricKeyType !== 'x25519' && privateKey.asymmetricKeyType !== 'rsa') {
      throw new AgentExit(`The key in ${path} is ${privateKey.asymmetricKeyType ?? 'unknown'}; X25519 or RSA is needed`);
    }
    return { privateKey, publicKeyPem: publicPem(privateKey), created: false };
  }
  const { privateKey } = generateKeyPairSync('x25519');
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // 'wx': two agents starting at once on the same path do not overwrite each other's key.
  const file = await open(path, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
    throw new AgentExit(`Cannot create the key file ${path}: ${err.message}`);
  });
  try {
    await file.writeFile(privateKey.export({ type: 'pkcs8', format: 'pem' }));
  } finally {
    await file.close();
  }
  await chmod(path, 0o600);
  return { privateKey, publicKeyPem: publicPem(privateKey), created: true };
}

function publicPem(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
}

/**
 * The fingerprint an admin compares before confirming this agent's key (docs/agent.md "Confirming
 * the key"): `SHA256:` and the unpadded base64 of the SHA-256 of the SPKI DER encoding, as the
 * service shows it (domain/reporting/key-fingerprint.ts; the agent is a package of its own).
 */
export function keyFingerprint(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}
