import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as pkijs from 'pkijs';
import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { createKey } from '../../support/api-keys';
import { makeCertificates, openssl, startTsa, type TestCertificates, type TestTsa } from '../../support/signing';
import { addMember, createTeam, inTeam } from '../../support/teams';

const run = promisify(execFile);

/**
 * Signatures (docs/documents.md "Signatures"): a project's PKCS#12 certificate uploaded once
 * (stored sealed, the password and key never answered), then `output.signature` on a generation
 * gives a PAdES signature that pdfsig (poppler, NSS) validates: ETSI.CAdES.detached over the whole
 * file, invalid after one byte changes; a visible box shows who signed; with a timestamp authority
 * (a local `openssl ts -reply` server) the CMS carries an RFC 3161 token that `openssl ts -verify`
 * accepts. Hostile uploads are refused with catalogued codes.
 */
describe('Signatures: signing certificates and PAdES output', () => {
  let app: TestApp;
  let p: DocumentProject;
  let other: DocumentProject;
  let certs: TestCertificates;
  let tsa: TestTsa;
  let work: string;

  beforeAll(async () => {
    [app, certs] = await Promise.all([startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } }), makeCertificates()]);
    tsa = await startTsa(certs);
    p = await setupDocumentProject(app);
    other = await setupDocumentProject(app);
    work = await mkdtemp(join(tmpdir(), 'formwork-signed-'));
  });
  afterAll(async () => {
    await Promise.all([app?.close(), tsa?.close()]);
    await Promise.all([certs?.cleanup(), work && rm(work, { recursive: true, force: true })]);
  });

  async function upload(token: string, file: Buffer | undefined, fields: Record<string, string>, headers: Record<string, string> = {}) {
    const form = new FormData();
    if (file) form.append('file', new Blob([new Uint8Array(file)]), 'signer.p12');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${app.url}/api/signing-certificates`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: form });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any, text };
  }

  const letter = { customer: 'Ada', items: [{ label: 'Consulting', amount: 1200 }] };

  async function signedPdf(token: string, signature: Record<string, unknown>, more: Record<string, unknown> = {}): Promise<string> {
    const res = await app.request('POST', '/api/documents/generate', { token, body: { templateId: p.templateId, format: 'pdf', variables: letter, output: { ...more, signature } } });
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
    const job = await waitForJob(app, token, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', output: { signature } });
    const file = await download(job.downloadUrl);
    const path = join(work, `${res.body.jobId}.pdf`);
    await writeFile(path, file.body);
    return path;
  }

  const pdfsig = async (path: string) => (await run('pdfsig', [path]).catch((e) => e)).stdout as string;

  /** The CMS of the file's signature, as pdfsig -dump writes it. */
  async function dumpedSignature(path: string): Promise<Buffer> {
    await run('pdfsig', ['-dump', path], { cwd: work });
    return readFile(join(work, `${path.split('/').pop()}.sig0`));
  }

  let certificateId: string;
  let tsaCertificateId: string;

  it('uploads a PKCS#12 (multipart): 201 with what the certificate says, never the password, file or key', async () => {
    const res = await upload(p.user.accessToken, certs.p12, { password: certs.password, name: 'Invoices' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Invoices',
      // RFC 4514: the last RDN of the certificate first (openssl -subj wrote CN first).
      subject: 'C=DE, O=Acme GmbH, CN=Ada Signer',
      issuer: 'O=Formwork Tests, CN=Formwork Test CA',
      serialNumber: expect.stringMatching(/^[0-9a-f]+$/),
      notBefore: expect.any(String),
      notAfter: expect.any(String),
      fingerprintSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      timestampUrl: null,
      createdAt: expect.any(String),
    });
    certificateId = res.body.id;
    const leafDer = (await openssl(certs.dir, 'x509', '-in', 'leaf.pem', '-outform', 'PEM')).stdout;
    const fingerprint = createHash('sha256').update(Buffer.from(leafDer.replace(/-----[^-]+-----|\s/g, ''), 'base64')).digest('hex');
    expect(res.body.fingerprintSha256).toBe(fingerprint);

    const list = await app.request('GET', '/api/signing-certificates', { token: p.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: any) => c.id)).toEqual([certificateId]);
    const one = await app.request('GET', `/api/signing-certificates/${certificateId}`, { token: p.user.accessToken });
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(certs.password);
      expect(text).not.toMatch(/p12|password|PRIVATE KEY|privateKey/i);
    }
    // At rest: sealed, not the file or the password.
    const [row] = await app.services.db.query(`SELECT p12, password FROM signing_certificates WHERE id = $1`, [certificateId]);
    expect(row.password).not.toContain(certs.password);
    expect(row.p12).not.toContain(certs.p12.toString('base64').slice(0, 40));
    expect(row.p12).toMatch(/^enc:/);
  });

  it('takes the same as JSON (base64), and an older -legacy file (RC2/3DES) too', async () => {
    const res = await app.request('POST', '/api/signing-certificates', { token: p.user.accessToken, body: { p12: certs.legacyP12.toString('base64'), password: certs.password, timestampUrl: tsa.url } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Ada Signer', timestampUrl: tsa.url });
    tsaCertificateId = res.body.id;
  });

  it('signs a generated PDF: pdfsig says valid, whole document, ETSI.CAdES.detached; one changed byte is a digest mismatch', async () => {
    const path = await signedPdf(p.apiKey, { certificateId, reason: 'Invoice approved', location: 'Berlin', contactInfo: 'billing@acme.example' });
    const out = await pdfsig(path);
    expect(out).toContain('Signer Certificate Common Name: Ada Signer');
    expect(out).toContain('Signature Type: ETSI.CAdES.detached');
    expect(out).toContain('Total document signed');
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('Signing Hash Algorithm: SHA-256');

    // The CMS: signed attributes of CAdES (signing-certificate-v2), no timestamp without an authority.
    const cms = (await openssl(work, 'cms', '-cmsout', '-print', '-inform', 'DER', '-in', (await writeTemp('plain.p7s', await dumpedSignature(path))))).stdout;
    expect(cms).toContain('signingCertificateV2');
    expect(cms).not.toContain('timeStampToken');
    // The signature's dictionary says why and where.
    const bytes = await readFile(path);
    expect(bytes.toString('latin1')).toMatch(/\/Reason \(Invoice approved\)[\s\S]*\/Location \(Berlin\)/);

    // One byte inside the signed ranges (the reason's text) changed: the digest no longer matches.
    const [, , gapStart, gapEnd] = /\/ByteRange \[(\d+) (\d+) (\d+) (\d+)\]/.exec(bytes.toString('latin1'))!.map(Number);
    const at = bytes.indexOf('/Reason (Invoice');
    expect(at).toBeGreaterThan(0);
    expect(at < gapStart || at >= gapEnd).toBe(true);
    const tampered = Buffer.from(bytes);
    tampered[at + 9] = 'X'.charCodeAt(0);
    const tamperedPath = await writeTemp('tampered.pdf', tampered);
    const bad = await pdfsig(tamperedPath);
    expect(bad).toContain('Signature Validation: Digest Mismatch.');
    expect(bad).not.toContain('Signature is Valid');
  });

  async function writeTemp(name: string, body: Buffer): Promise<string> {
    const path = join(work, name);
    await writeFile(path, body);
    return path;
  }

  it('a visible signature shows who signed, when, why and where on the last page', async () => {
    const path = await signedPdf(p.apiKey, { certificateId, reason: 'Contract', location: 'Hamburg', visible: true });
    expect(await pdfsig(path)).toContain('Signature is Valid.');
    const pages = Number(/Pages:\s+(\d+)/.exec((await run('pdfinfo', [path])).stdout)![1]);
    const lastPage = (await run('pdftotext', ['-f', String(pages), '-l', String(pages), path, '-'])).stdout;
    expect(lastPage).toContain('Digitally signed by Ada Signer');
    expect(lastPage).toMatch(/Date: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(lastPage).toContain('Reason: Contract');
    expect(lastPage).toContain('Location: Hamburg');
  });

  it('a signed PDF/A-3b: one signature valid over the whole file, which still says PDF/A-3b (the two steps share one parse and one save)', async () => {
    const path = await signedPdf(p.apiKey, { certificateId, reason: 'Archived' }, { pdfa: '3b' });
    const out = await pdfsig(path);
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('Total document signed');
    expect(out.match(/Signature #\d+/g)).toEqual(['Signature #1']);
    const meta = (await run('pdfinfo', ['-meta', path])).stdout;
    expect(meta).toContain('<pdfaid:part>3</pdfaid:part>');
    expect(meta).toContain('<pdfaid:conformance>B</pdfaid:conformance>');
    expect((await readFile(path)).toString('latin1')).toMatch(/^%PDF-1\.7/);
  });

  it('with a timestamp authority: PAdES B-T, the token over the signature value verifies with openssl ts', async () => {
    const before = tsa.requests.length;
    const path = await signedPdf(p.apiKey, { certificateId: tsaCertificateId });
    expect(await pdfsig(path)).toContain('Signature is Valid.');
    expect(tsa.requests.length).toBe(before + 1);
    const der = await dumpedSignature(path);
    const cms = (await openssl(work, 'cms', '-cmsout', '-print', '-inform', 'DER', '-in', await writeTemp('tsa.p7s', der))).stdout;
    expect(cms).toContain('id-smime-aa-timeStampToken');
    // The token, read from the unsigned attribute, stamps the SHA-256 of this signature's value.
    const signed = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(new Uint8Array(der)).content });
    const signer = signed.signerInfos[0];
    const token = signer.unsignedAttrs!.attributes.find((a) => a.type === '1.2.840.113549.1.9.16.2.14')!.values[0];
    const tokenPath = await writeTemp('token.der', Buffer.from(token.toBER(false)));
    const digest = createHash('sha256').update(signer.signature.valueBlock.valueHexView).digest('hex');
    const verified = await openssl(work, 'ts', '-verify', '-token_in', '-in', tokenPath, '-digest', digest, '-CAfile', join(certs.dir, 'ca.pem'), '-untrusted', join(certs.dir, 'tsa.pem'));
    expect(verified.stdout).toContain('Verification: OK');
  });

  it('refuses hostile uploads: wrong password, not a PKCS#12, no key, expired, costly iteration count (400 ERR_SIGN_002); oversize (413 while streaming)', async () => {
    const token = p.user.accessToken;
    const wrong = await upload(token, certs.p12, { password: 'not it' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ code: 'ERR_SIGN_002', relatedInfo: { reason: 'password' } });

    const pdf = await upload(token, Buffer.from('%PDF-1.7\n%this is no PKCS#12\n'), { password: 'x' });
    expect(pdf.status).toBe(400);
    expect(pdf.body).toMatchObject({ code: 'ERR_SIGN_002', relatedInfo: { reason: 'malformed' } });

    const keyless = await upload(token, certs.keylessP12, { password: certs.password });
    expect(keyless.status).toBe(400);
    expect(keyless.body).toMatchObject({ code: 'ERR_SIGN_002', relatedInfo: { reason: 'no_private_key' } });

    const expired = await upload(token, certs.expiredP12, { password: certs.password });
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ code: 'ERR_SIGN_002', relatedInfo: { reason: 'expired', notAfter: expect.any(String) } });

    // 60,000 iterations: refused from the file's structure, before any key is derived.
    const costly = await upload(token, certs.costlyP12, { password: certs.password });
    expect(costly.status).toBe(400);
    expect(costly.body).toMatchObject({ code: 'ERR_SIGN_002', relatedInfo: { reason: 'iterations', limit: 50_000 } });

    const huge = await upload(token, Buffer.alloc(2 * 1024 * 1024, 0x30), { password: 'x' });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('ERR_REQ_002');

    const noFile = await upload(token, undefined, { password: 'x' });
    expect(noFile.status).toBe(400);
    expect(noFile.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'file' } });

    const count = await app.services.db.query(`SELECT count(*)::int AS n FROM signing_certificates WHERE project_id = $1`, [p.projectId]);
    expect(count[0].n).toBe(2);
  });

  it('refuses a timestamp authority on an address the outbound guard blocks (400 ERR_OUTBOUND_001)', async () => {
    for (const timestampUrl of ['http://169.254.169.254/tsa', 'http://10.0.0.1/tsa']) {
      const res = await upload(p.user.accessToken, certs.p12, { password: certs.password, timestampUrl });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ERR_OUTBOUND_001');
    }
  });

  it('keeps certificates to their project: another project sees 404 ERR_SIGN_001, its generation naming one is refused at once', async () => {
    const get = await app.request('GET', `/api/signing-certificates/${certificateId}`, { token: other.user.accessToken });
    expect(get.status).toBe(404);
    expect(get.body.code).toBe('ERR_SIGN_001');
    const del = await app.request('DELETE', `/api/signing-certificates/${certificateId}`, { token: other.user.accessToken });
    expect(del.status).toBe(404);
    expect((await app.request('GET', '/api/signing-certificates', { token: other.apiKey })).body.data).toEqual([]);

    const body = (certificate: string) => ({ templateId: other.templateId, format: 'pdf', variables: letter, output: { signature: { certificateId: certificate } } });
    const generate = await app.request('POST', '/api/documents/generate', { token: other.apiKey, body: body(certificateId) });
    expect({ status: generate.status, body: generate.body }).toMatchObject({ status: 404 });
    expect(generate.body).toMatchObject({ code: 'ERR_SIGN_001', relatedInfo: { certificateId } });
    const batch = await app.request('POST', '/api/documents/generate/batch', { token: other.apiKey, body: { templateId: other.templateId, format: 'pdf', documents: [{ variables: letter }], output: { signature: { certificateId } } } });
    expect(batch.status).toBe(404);
    expect(batch.body.code).toBe('ERR_SIGN_001');
  });

  it('who may: admins and owners upload and delete; members and keys with generate_documents read; viewers and keys not', async () => {
    const team = await createTeam(app, p.user);
    const [viewer, member, admin] = await Promise.all([addMember(app, p.user, team.id, 'viewer'), addMember(app, p.user, team.id, 'member'), addMember(app, p.user, team.id, 'admin')]);
    const asMember = await upload(member.accessToken, certs.p12, { password: certs.password }, inTeam(team.id));
    expect(asMember.status).toBe(403);
    expect(asMember.body.code).toBe('ERR_AUTH_005');
    const key = await createKey(app, p.user.accessToken, { name: 'all flags', permissions: { generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: true, manage_gates: true } }, team.id);
    const asKey = await upload(key.plainKey, certs.p12, { password: certs.password });
    expect(asKey.status).toBe(403);
    const asAdmin = await upload(admin.accessToken, certs.p12, { password: certs.password }, inTeam(team.id));
    expect(asAdmin.status).toBe(201);

    const viewerRead = await app.request('GET', '/api/signing-certificates', { token: viewer.accessToken, headers: inTeam(team.id) });
    expect(viewerRead.status).toBe(403);
    const memberRead = await app.request('GET', '/api/signing-certificates', { token: member.accessToken, headers: inTeam(team.id) });
    expect(memberRead.body.data.map((c: any) => c.id)).toEqual([asAdmin.body.id]);
    const readOnlyKey = await createKey(app, p.user.accessToken, { name: 'reader', permissions: { read_documents: true } }, team.id);
    expect((await app.request('GET', '/api/signing-certificates', { token: readOnlyKey.plainKey })).status).toBe(403);

    const memberDelete = await app.request('DELETE', `/api/signing-certificates/${asAdmin.body.id}`, { token: member.accessToken, headers: inTeam(team.id) });
    expect(memberDelete.status).toBe(403);
    const adminDelete = await app.request('DELETE', `/api/signing-certificates/${asAdmin.body.id}`, { token: admin.accessToken, headers: inTeam(team.id) });
    expect(adminDelete.status).toBe(204);
    expect((await app.request('GET', `/api/signing-certificates/${asAdmin.body.id}`, { token: admin.accessToken, headers: inTeam(team.id) })).status).toBe(404);
  });

  it('a certificate deleted after the job was accepted: the job fails with ERR_SIGN_001', async () => {
    const created = await upload(p.user.accessToken, certs.p12, { password: certs.password });
    expect(created.status).toBe(201);
    // No worker while the job is accepted and the certificate deleted: the render comes after both.
    await app.stopWorker();
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: letter, output: { signature: { certificateId: created.body.id } } } });
    const deleted = await app.request('DELETE', `/api/signing-certificates/${created.body.id}`, { token: p.user.accessToken });
    await app.startWorker();
    expect(res.status).toBe(201);
    expect(deleted.status).toBe(204);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job.status).toBe('failed');
    const [row] = await app.services.db.query(`SELECT error_code FROM document_jobs WHERE id = $1`, [res.body.jobId]);
    expect(row.error_code).toBe('ERR_SIGN_001');
  });
});
