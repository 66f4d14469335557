import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { AppError } from '../../../domain/errors';

/**
 * A PKCS#12 file opened (docs/documents.md "Signatures"): node-forge reads the container (legacy
 * RC2/3DES and PBES2/AES alike), Node's crypto reads the keys and certificates it holds.
 *
 * The file is hostile until proven otherwise: its key-derivation iteration counts (the MAC's and
 * each encrypted bag's) are read from its structure before any key is derived, and a count above
 * P12_MAX_ITERATIONS is refused (ERR_SIGN_002, reason `iterations`) instead of spinning the CPU.
 * The API reads an upload in a child process of its own (p12-child.ts: heap and time limited),
 * never on the thread that serves HTTP; signatures open it in the PDF tools' processes.
 */

/**
 * Highest key-derivation iteration count accepted: common tools use 2,048 (OpenSSL) to 10,000 (Java);
 * the PKCS#12 MAC's derivation runs in JavaScript, about 30 ms per thousand iterations.
 */
const P12_MAX_ITERATIONS = 50_000;
/** Largest PKCS#12 file accepted (a key and a chain of a few certificates are a few KB). */
export const P12_MAX_BYTES = 64 * 1024;

export interface CertificateInfo {
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  fingerprintSha256: string;
}

export interface OpenedP12 {
  key: KeyObject;
  /** The key as PKCS#8 DER. */
  keyPkcs8: Buffer;
  /** The signer's certificate (the one of the key), DER. */
  certificate: Buffer;
  /** The other certificates of the file (its chain), DER. */
  chain: Buffer[];
  info: CertificateInfo;
}

export const refuseP12 = (reason: string, message: string, extra: Record<string, unknown> = {}) => new AppError('ERR_SIGN_002', message, { reason, ...extra });

type Asn1 = forge.asn1.Asn1;
const { Type, Class } = forge.asn1;

/**
 * The largest iteration count in the file: an INTEGER right after an OCTET STRING in a SEQUENCE is
 * how PKCS#12 MacData (macSalt, iterations), PKCS#12 PBE parameters (salt, iterations) and PBKDF2
 * parameters (salt, iterationCount) are all written. OCTET STRINGs holding DER (the authenticated
 * safe, each SafeContents) are read as well; encrypted ones do not parse and hold no counts.
 */
function largestIterationCount(node: Asn1, depth = 0, decoded = 0): number {
  if (depth > 100 || decoded > 4) throw refuseP12('malformed', 'The PKCS#12 file is nested too deeply');
  let most = 0;
  if (node.tagClass === Class.UNIVERSAL && node.type === Type.OCTETSTRING && typeof node.value === 'string' && node.value.charCodeAt(0) === 0x30) {
    try {
      most = largestIterationCount(forge.asn1.fromDer(node.value), depth + 1, decoded + 1);
    } catch (e) {
      if (e instanceof AppError) throw e;
    }
  }
  if (!Array.isArray(node.value)) return most;
  const children = node.value;
  children.forEach((child, i) => {
    const prev = children[i - 1];
    if (prev && child.tagClass === Class.UNIVERSAL && child.type === Type.INTEGER && prev.tagClass === Class.UNIVERSAL && prev.type === Type.OCTETSTRING && typeof child.value === 'string') {
      const bytes = child.value.replace(/^\x00+/, '');
      most = Math.max(most, bytes.length > 6 ? Infinity : parseInt(forge.util.bytesToHex(bytes) || '0', 16));
    }
    most = Math.max(most, largestIterationCount(child, depth + 1, decoded));
  });
  return most;
}

/** RFC 4514 order (the certificate's last RDN first), from Node's one-attribute-per-line form. */
const distinguishedName = (lines: string) => lines.split('\n').filter(Boolean).reverse().join(', ');

function describeCertificate(der: Buffer): CertificateInfo {
  const x = new X509Certificate(der);
  return {
    subject: distinguishedName(x.subject),
    issuer: distinguishedName(x.issuer),
    serialNumber: x.serialNumber.toLowerCase(),
    notBefore: new Date(x.validFrom).toISOString(),
    notAfter: new Date(x.validTo).toISOString(),
    fingerprintSha256: x.fingerprint256.replace(/:/g, '').toLowerCase(),
  };
}

/**
 * Opens a PKCS#12 file with its password: the private key and the certificate that matches it,
 * with the other certificates as its chain. ERR_SIGN_002 with `reason`: `iterations`, `malformed`,
 * `password`, `no_private_key`, `no_certificate`, `expired` (`at`: when the check ran), `not_yet_valid`.
 */
export function openP12(p12: Buffer, password: string, at: Date = new Date()): OpenedP12 {
  if (p12.length > P12_MAX_BYTES) throw refuseP12('too_large', `A PKCS#12 file is at most ${P12_MAX_BYTES} bytes`, { limit: P12_MAX_BYTES });
  let outer: Asn1;
  try {
    outer = forge.asn1.fromDer(p12.toString('binary'));
  } catch {
    throw refuseP12('malformed', 'This is not a PKCS#12 file');
  }
  const iterations = largestIterationCount(outer);
  if (iterations > P12_MAX_ITERATIONS) {
    throw refuseP12('iterations', `The PKCS#12 file asks for ${Number.isFinite(iterations) ? iterations : 'too many'} key-derivation iterations; at most ${P12_MAX_ITERATIONS} are accepted`, { limit: P12_MAX_ITERATIONS });
  }
  let pfx: forge.pkcs12.Pkcs12Pfx;
  try {
    pfx = forge.pkcs12.pkcs12FromAsn1(outer, true, password);
  } catch (e) {
    const message = String((e as Error)?.message ?? e);
    if (/password|MAC could not be verified|decrypt/i.test(message)) throw refuseP12('password', 'The PKCS#12 file cannot be opened with this password');
    throw refuseP12('malformed', `The PKCS#12 file cannot be read: ${message.slice(0, 200)}`);
  }
  const bags = pfx.safeContents.flatMap((sc) => sc.safeBags) as Array<forge.pkcs12.Bag & { asn1?: Asn1 }>;
  const keys: KeyObject[] = [];
  const certs: Buffer[] = [];
  for (const bag of bags) {
    if (bag.type === forge.pki.oids.keyBag || bag.type === forge.pki.oids.pkcs8ShroudedKeyBag) {
      const info = bag.key ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key)) : bag.asn1;
      if (!info) continue;
      try {
        keys.push(createPrivateKey({ key: Buffer.from(forge.asn1.toDer(info).getBytes(), 'binary'), format: 'der', type: 'pkcs8' }));
      } catch {
        throw refuseP12('no_private_key', 'The private key of the PKCS#12 file is of a kind that cannot sign');
      }
    } else if (bag.type === forge.pki.oids.certBag) {
      const asn1 = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : bag.asn1;
      if (asn1) certs.push(Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary'));
    }
  }
  if (!keys.length) throw refuseP12('no_private_key', 'The PKCS#12 file holds no private key');
  if (!certs.length) throw refuseP12('no_certificate', 'The PKCS#12 file holds no certificate');
  const spki = (k: KeyObject) => k.export({ type: 'spki', format: 'der' }).toString('base64');
  const key = keys[0];
  if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ec') throw refuseP12('no_private_key', `A ${key.asymmetricKeyType} key cannot sign here: an RSA or EC (P-256, P-384, P-521) key is needed`);
  const own = spki(createPublicKey(key));
  const certificate = certs.find((c) => {
    try {
      return spki(new X509Certificate(c).publicKey) === own;
    } catch {
      return false;
    }
  });
  if (!certificate) throw refuseP12('no_certificate', 'No certificate of the PKCS#12 file matches its private key');
  const info = describeCertificate(certificate);
  if (new Date(info.notAfter) < at) throw refuseP12('expired', `The certificate expired on ${info.notAfter}`, { notAfter: info.notAfter });
  if (new Date(info.notBefore) > at) throw refuseP12('not_yet_valid', `The certificate is valid from ${info.notBefore} only`, { notBefore: info.notBefore });
  return { key, keyPkcs8: key.export({ type: 'pkcs8', format: 'der' }), certificate, chain: certs.filter((c) => c !== certificate), info };
}
