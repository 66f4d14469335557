import childProcess from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptPdf } from '../../../adapters/rendering/pdf-tools/encrypt';
import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { requiresPassword, showEncryption, textWith, onPdf } from '../../support/output-files';

/**
 * output.encryption (docs/documents.md "Encryption"): AES-256 (security handler R6) with a user
 * and an owner password and permission flags, read back with qpdf and poppler; the passwords are
 * write-only in answers and sealed in the database.
 */
describe('Encryption: AES-256 with user and owner passwords and permissions', () => {
  let app: TestApp;
  let p: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp();
    p = await setupDocumentProject(app);
  });
  afterAll(() => app.close());

  const generate = (body: Record<string, unknown>) => app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'Ada Lovelace' }, ...body } });

  async function encrypted(encryption: Record<string, unknown>) {
    const res = await generate({ output: { encryption } });
    expect(res.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job.status).toBe('completed');
    const file = await download(job.downloadUrl);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    return { job, pdf: file.body };
  }

  it('a user password: AES-256 (R6), the permissions asked; unreadable without a password, readable with either', async () => {
    const user = 'open sesame ü';
    const owner = 'owner: "x"\\y';
    const { job, pdf } = await encrypted({ userPassword: user, ownerPassword: owner, permissions: { print: true, copy: false, modify: false } });

    const asUser = await showEncryption(pdf, user);
    expect(asUser.code).toBe(0);
    expect(asUser.stdout).toMatch(/^R = 6$/m);
    for (const method of ['stream', 'string', 'file']) expect(asUser.stdout).toContain(`${method} encryption method: AESv3`);
    expect(asUser.stdout).toContain('Supplied password is user password');
    expect(asUser.stdout).toContain('print high resolution: allowed');
    expect(asUser.stdout).toContain('extract for any purpose: not allowed');
    for (const change of ['modify document assembly', 'modify forms', 'modify annotations', 'modify other']) expect(asUser.stdout).toContain(`${change}: not allowed`);

    // Without the password: qpdf says one is needed, pdftotext reads nothing.
    expect(await requiresPassword(pdf)).toBe(0);
    const check = await onPdf(pdf, 'qpdf', (path) => ['--check', path]);
    expect(check.code).not.toBe(0);
    expect(check.stderr).toMatch(/invalid password/);
    const blind = await textWith(pdf);
    expect(blind.code).not.toBe(0);
    expect(blind.stdout).not.toContain('Ada');
    expect(blind.stderr).toMatch(/password/i);
    const wrong = await textWith(pdf, { user: 'open sesame' });
    expect(wrong.code).not.toBe(0);

    // With the user password, and with the owner password.
    expect((await textWith(pdf, { user })).stdout).toContain('Dear Ada Lovelace');
    expect((await textWith(pdf, { owner })).stdout).toContain('Dear Ada Lovelace');
    expect((await showEncryption(pdf, owner)).stdout).toContain('Supplied password is owner password');

    // The answer shows the passwords as set, never their values; the column holds them sealed.
    expect(job.output).toEqual({ encryption: { permissions: { print: true, copy: false, modify: false }, ownerPassword: { set: true }, userPassword: { set: true } } });
    expect(JSON.stringify(job)).not.toContain('sesame');
    const [row] = await app.services.db.query(`SELECT output, output::text AS raw FROM document_jobs WHERE id = $1`, [job.jobId]);
    expect(row.raw).not.toContain('sesame');
    expect(row.raw).not.toContain('owner: ');
    expect(row.output.encryption.ownerPassword).toMatch(/^enc:v1:/);
    expect(row.output.encryption.userPassword).toMatch(/^enc:v1:/);
  });

  it('no user password: anyone opens it, the permissions still hold (printing off, copying and changes on)', async () => {
    const { job, pdf } = await encrypted({ ownerPassword: 'only-the-owner', permissions: { print: false, copy: true, modify: true } });
    expect(job.output.encryption).toEqual({ permissions: { print: false, copy: true, modify: true }, ownerPassword: { set: true }, userPassword: { set: false } });
    // Encrypted, opens without a password.
    expect(await requiresPassword(pdf)).toBe(3);
    const shown = await showEncryption(pdf);
    expect(shown.stdout).toMatch(/^R = 6$/m);
    expect(shown.stdout).toContain('file encryption method: AESv3');
    expect(shown.stdout).toContain('print low resolution: not allowed');
    expect(shown.stdout).toContain('print high resolution: not allowed');
    expect(shown.stdout).toContain('extract for any purpose: allowed');
    expect(shown.stdout).toContain('modify anything: allowed');
    expect((await textWith(pdf)).stdout).toContain('Dear Ada Lovelace');
    expect((await showEncryption(pdf, 'only-the-owner')).stdout).toContain('Supplied password is owner password');
  });

  it('the default permissions: printing allowed, copying and changes not', async () => {
    const { job, pdf } = await encrypted({ ownerPassword: 'defaults' });
    expect(job.output.encryption.permissions).toEqual({ print: true, copy: false, modify: false });
    const shown = await showEncryption(pdf, 'defaults');
    expect(shown.stdout).toContain('Supplied password is owner password');
    expect(shown.stdout).toContain('print high resolution: allowed');
    expect(shown.stdout).toContain('extract for any purpose: not allowed');
    expect(shown.stdout).toContain('modify anything: not allowed');
  });

  it('refused when asked (400 ERR_VALID_001 naming the field, ERR_VALID_005 when missing): with PDF/A, with a signature, the same password twice, without an owner password', async () => {
    const cases: Array<[Record<string, unknown>, string, string?]> = [
      [{ pdfa: '3b', encryption: { ownerPassword: 'o' } }, 'output.encryption'],
      [{ signature: { certificateId: randomUUID() }, encryption: { ownerPassword: 'o' } }, 'output.encryption'],
      [{ encryption: { userPassword: 'same', ownerPassword: 'same' } }, 'output.encryption.ownerPassword'],
      [{ encryption: { userPassword: 'u' } }, 'output.encryption.ownerPassword', 'ERR_VALID_005'],
      [{ encryption: { ownerPassword: 'o'.repeat(128) } }, 'output.encryption.ownerPassword'],
    ];
    for (const [output, field, code = 'ERR_VALID_001'] of cases) {
      const res = await generate({ output });
      expect({ output, status: res.status, code: res.body.code }).toEqual({ output, status: 400, code });
      expect(res.body.relatedInfo.field).toBe(field);
    }
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1 AND output IS NOT NULL AND status <> 'completed'`, [p.projectId]);
    expect(n).toBe(0);
  });

  it('the passwords are never on a command line (where ps shows them), and no file of them is left', async () => {
    const plain = await download((await waitForJob(app, p.apiKey, (await generate({})).body.jobId)).downloadUrl);
    const dir = await mkdtemp(join(tmpdir(), 'formwork-enc-'));
    const calls: string[][] = [];
    const execFile = childProcess.execFile;
    const spy = jest.spyOn(childProcess, 'execFile').mockImplementation(((file: string, args: string[], ...rest: unknown[]) => {
      calls.push([file, ...args]);
      return execFile(file, args, ...(rest as [never, never]));
    }) as never);
    try {
      const pdf = await encryptPdf(plain.body, { userPassword: 'user-SECRET-1', ownerPassword: 'owner-SECRET-2' }, dir);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls[0]).toEqual(expect.arrayContaining(['prlimit', 'qpdf']));
      expect(calls.flat().join(' ')).not.toMatch(/SECRET/);
      expect(await readdir(dir)).toEqual([]);
      expect((await textWith(pdf, { user: 'user-SECRET-1' })).stdout).toContain('Dear Ada Lovelace');
    } finally {
      spy.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
