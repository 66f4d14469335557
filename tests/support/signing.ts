import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const openssl = (dir: string, ...args: string[]) => run('openssl', args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 });

/**
 * Test certificates made with `openssl` as a company would: a self-signed CA, a signer's certificate
 * it issued (digitalSignature, nonRepudiation) packed with its key and the CA into PKCS#12 files,
 * and a timestamp authority's certificate (critical extendedKeyUsage timeStamping) for `startTsa`.
 */
export interface TestCertificates {
  dir: string;
  password: string;
  /** The signer's PKCS#12 (OpenSSL 3 defaults: PBES2/AES-256, 2,048 iterations). */
  p12: Buffer;
  /** The same with `-legacy` (RC2/3DES, SHA-1 MAC), as older tools write them. */
  legacyP12: Buffer;
  /** The same with 60,000 key-derivation iterations: over the accepted bound. */
  costlyP12: Buffer;
  /** A PKCS#12 with the certificate only, no key. */
  keylessP12: Buffer;
  /** The signer's key with a certificate that expired yesterday. */
  expiredP12: Buffer;
  caPem: string;
  cleanup(): Promise<void>;
}

const EXTENSIONS = `
[v3_ca]
basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign
subjectKeyIdentifier=hash
[v3_leaf]
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
[v3_tsa]
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,timeStamping
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
`;

export async function makeCertificates(password = 'correct horse'): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'formwork-sign-'));
  const o = (...args: string[]) => openssl(dir, ...args);
  await writeFile(join(dir, 'ext.cnf'), EXTENSIONS);
  await o('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Formwork Test CA/O=Formwork Tests', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  for (const [name, subject, ext] of [
    ['leaf', '/CN=Ada Signer/O=Acme GmbH/C=DE', 'v3_leaf'],
    ['tsa', '/CN=Formwork Test TSA/O=Formwork Tests', 'v3_tsa'],
  ]) {
    await o('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    await o('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '10', '-extfile', 'ext.cnf', '-extensions', ext);
  }
  const pass = `pass:${password}`;
  await o('pkcs12', '-export', '-inkey', 'leaf.key', '-in', 'leaf.pem', '-certfile', 'ca.pem', '-out', 'leaf.p12', '-passout', pass);
  await o('pkcs12', '-export', '-inkey', 'leaf.key', '-in', 'leaf.pem', '-certfile', 'ca.pem', '-out', 'legacy.p12', '-passout', pass, '-legacy');
  await o('pkcs12', '-export', '-inkey', 'leaf.key', '-in', 'leaf.pem', '-out', 'costly.p12', '-passout', pass, '-iter', '60000');
  await o('pkcs12', '-export', '-nokeys', '-in', 'leaf.pem', '-out', 'keyless.p12', '-passout', pass);
  // Valid until a day before it was issued: expired from the start.
  await o('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'expired.pem', '-days', '-1', '-extfile', 'ext.cnf', '-extensions', 'v3_leaf');
  await o('pkcs12', '-export', '-inkey', 'leaf.key', '-in', 'expired.pem', '-out', 'expired.p12', '-passout', pass);
  const read = (f: string) => readFile(join(dir, f));
  return {
    dir,
    password,
    p12: await read('leaf.p12'),
    legacyP12: await read('legacy.p12'),
    costlyP12: await read('costly.p12'),
    keylessP12: await read('keyless.p12'),
    expiredP12: await read('expired.p12'),
    caPem: (await read('ca.pem')).toString(),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface TestTsa {
  url: string;
  /** The requests it answered (DER TimeStampReq). */
  requests: Buffer[];
  close(): Promise<void>;
}

/**
 * An RFC 3161 timestamp authority on a local port: each POSTed request is answered by
 * `openssl ts -reply` with the TSA certificate of `makeCertificates`, a real implementation.
 */
export async function startTsa(certs: TestCertificates): Promise<TestTsa> {
  const { dir } = certs;
  await writeFile(join(dir, 'tsaserial'), '01\n');
  await writeFile(
    join(dir, 'tsa.cnf'),
    `[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
dir = ${dir}
serial = $dir/tsaserial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/ca.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`,
  );
  const requests: Buffer[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        requests.push(body);
        const id = (n += 1);
        const query = join(dir, `q${id}.tsq`);
        const reply = join(dir, `r${id}.tsr`);
        await writeFile(query, body);
        try {
          await openssl(dir, 'ts', '-reply', '-config', join(dir, 'tsa.cnf'), '-queryfile', query, '-out', reply);
          res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(await readFile(reply));
        } catch (e) {
          res.writeHead(500).end(String(e));
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/tsa`, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
