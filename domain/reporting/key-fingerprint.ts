import { createHash, createPublicKey } from 'node:crypto';

/**
 * The fingerprint of an agent's public key as people compare it (docs/agent.md "Confirming the
 * key"): `SHA256:` and the unpadded base64 of the SHA-256 of the key's SPKI DER encoding, the form
 * OpenSSH shows. The agent prints the same at its start (agent/src/keys.ts).
 */
export function keyFingerprint(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}
