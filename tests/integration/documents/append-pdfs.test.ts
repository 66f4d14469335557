import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { download, waitForJob } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { pdfInfo, pdfText, PNG_1PX } from '../../support/rendering-pdf';
import { textPdf } from '../../support/pdf-parts';
import { buildTemplate, createTemplate, publish } from '../../support/templates';

/** A template's appended PDFs: terms and conditions from its assets (docs/documents.md "Merging and appended PDFs"). */
describe('appended PDFs', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let aliceKey: string;
  beforeAll(async () => {
    app = await startTestApp();
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    aliceKey = (await createKey(app, alice.accessToken)).plainKey;
  });
  afterAll(() => app.close());

  async function upload(token: string, file: Buffer, filename: string) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(file)]), filename);
    const res = await fetch(`${app.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    return { status: res.status, body: (await res.json()) as any };
  }

  const withAppended = (ids: string[]) => {
    const base = buildTemplate();
    return { schema: { ...(base.schema as object), appendPdfs: ids } };
  };

  async function generated(templateId: string) {
    const res = await app.request('POST', '/api/documents/generate', { token: aliceKey, body: { templateId, format: 'pdf', variables: { customer: 'Ada' } } });
    expect(res.status).toBe(201);
    return waitForJob(app, aliceKey, res.body.jobId);
  }

  it('takes a PDF as an asset and appends it, in order, after every page a template renders', async () => {
    const terms = await upload(alice.accessToken, await textPdf('Terms and conditions', 2), 'terms.pdf');
    expect(terms.status).toBe(201);
    expect(terms.body).toMatchObject({ kind: 'pdf', mediaType: 'application/pdf' });
    const privacy = await upload(alice.accessToken, await textPdf('Privacy notice', 1), 'privacy.pdf');
    expect(privacy.status).toBe(201);
    const listed = await app.request('GET', '/api/assets?kind=pdf', { token: alice.accessToken });
    expect(listed.body.data.map((a: any) => a.id).sort()).toEqual([terms.body.id, privacy.body.id].sort());

    const plain = await createTemplate(app, alice.accessToken);
    await publish(app, alice.accessToken, plain.id);
    const plainPages = (await pdfInfo((await download((await generated(plain.id)).downloadUrl)).body)).pages;

    const template = await createTemplate(app, alice.accessToken, withAppended([terms.body.id, privacy.body.id]));
    await publish(app, alice.accessToken, template.id);
    const job = await generated(template.id);
    expect(job.status).toBe('completed');
    const pdf = (await download(job.downloadUrl)).body;
    expect((await pdfInfo(pdf)).pages).toBe(plainPages + 3);
    expect(await pdfText(pdf, { page: 1 })).toContain('Dear Ada');
    expect(await pdfText(pdf, { page: plainPages + 1 })).toContain('Terms and conditions page 1');
    expect(await pdfText(pdf, { page: plainPages + 2 })).toContain('Terms and conditions page 2');
    expect(await pdfText(pdf, { page: plainPages + 3 })).toContain('Privacy notice page 1');
  });

  it('refuses a template naming what is not a PDF asset of its project', async () => {
    const image = await upload(alice.accessToken, PNG_1PX, 'dot.png');
    const bobs = await upload(bob.accessToken, await textPdf('Not yours', 1), 'bob.pdf');
    for (const id of [image.body.id, bobs.body.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await app.request('POST', '/api/templates', { token: alice.accessToken, body: buildTemplate(withAppended([id])) });
      expect([id, res.status, res.body.code, res.body.relatedInfo?.path]).toEqual([id, 400, 'ERR_TMPL_008', 'schema.appendPdfs[0]']);
    }
    const notAnId = await app.request('POST', '/api/templates', { token: alice.accessToken, body: buildTemplate(withAppended(['../etc/passwd'])) });
    expect(notAnId.status).toBe(400);
  });

  it('fails the document, not the worker, when an appended PDF only starts like one', async () => {
    const fake = await upload(alice.accessToken, Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('no objects here\n'.repeat(20))]), 'fake.pdf');
    expect(fake.status).toBe(201);
    const template = await createTemplate(app, alice.accessToken, withAppended([fake.body.id]));
    await publish(app, alice.accessToken, template.id);
    const job = await generated(template.id);
    expect(job.status).toBe('failed');
    expect(job.errorMessage).toMatch(/not a readable PDF/);
  });
});
