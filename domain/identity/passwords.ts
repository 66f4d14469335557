import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Passwords are hashed with scrypt (memory-hard, in node:crypto): `scrypt$N$r$p$salt$hash`, base64.
 * Parameters are stored with the hash, so they can be raised without breaking old hashes: a hash
 * made with other parameters still verifies, and `needsRehash` tells login to store a new one.
 *
 * Cost: N=2^14, r=8, p=5, one of the OWASP Password Storage Cheat Sheet's equivalent minimum scrypt
 * settings (2^17/8/1, 2^16/8/2, 2^15/8/3, 2^14/8/5, 2^13/8/10). Of these it needs 16 MiB per hash
 * (128 × N × r) instead of 128 MiB, so parallel logins cannot exhaust memory, at the same CPU cost.
 * Until 2026 the service used 2^14/8/1, five times cheaper.
 */
const PARAMS = { N: 16384, r: 8, p: 5 };
const KEYLEN = 32;
/** Above 128 × N × r (16 MiB here, 128 MiB for the costliest OWASP setting an old hash might carry). */
const MAXMEM = 160 * 1024 * 1024;

function derive(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEYLEN, { ...opts, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** True when `stored` was made with other parameters than today's: hash the password again after a good login. */
export function needsRehash(stored: string): boolean {
  const [alg, n, r, p] = stored.split('$');
  return alg !== 'scrypt' || Number(n) !== PARAMS.N || Number(r) !== PARAMS.r || Number(p) !== PARAMS.p;
}

/** A hash to compare against when the user does not exist, so timing does not reveal accounts (today's parameters). */
export const DUMMY_PASSWORD_HASH = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
