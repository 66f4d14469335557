import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing/lib/mocking-activity-environment';
import { activityInterceptors } from '../../../activities/failure';
import type { FinishRequest, PdfTools } from '../../../adapters/rendering/pdf-tools/pdf-tools';
import { createPreviewActivities } from '../../../activities/rendering/render-preview.activity';
import { previewKeys, type PreviewRenderOutput, type PreviewRequest } from '../../../domain/documents/previews';
import { renderLimitsOf } from '../../../platform/services';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { squeezedText } from '../../support/rendering-pdf';
import { buildTemplate, createTemplate } from '../../support/templates';

/**
 * `output` on POST /api/templates/:id/preview (docs/documents.md "Output options"): refused as on
 * generation when the combination is (400 ERR_VALID_001 naming `output.<field>`), and handed by the
 * render worker's preview activity to the PDF tools with the watermarked PDF. The PDF tools are a
 * recorder here (the steps are other tests' subject).
 */
describe('Templates: preview with output options', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let templateId: string;
  beforeAll(async () => {
    app = await startTestApp();
    alice = await signUp(app);
    templateId = (await createTemplate(app, alice.accessToken)).id;
  });
  afterAll(() => app.close());

  it.each([
    ['PDF/A with encryption', { pdfa: '3b', encryption: { ownerPassword: 'o' } }, 'output.encryption'],
    ['a signature with encryption', { signature: { certificateId: randomUUID() }, encryption: { ownerPassword: 'o' } }, 'output.encryption'],
    ['an image on a PDF preview', { image: { dpi: 72 } }, 'output.image'],
    ['a batch archive', { archive: 'zip' }, 'output.archive'],
    ['a level that does not exist', { pdfa: '4z' }, 'output.pdfa'],
  ])('refuses %s: 400 ERR_VALID_001 naming the field', async (_what, output, field) => {
    const res = await app.request('POST', `/api/templates/${templateId}/preview`, { token: alice.accessToken, body: { variables: { customer: 'Ada' }, format: 'pdf', output } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field } });
  });

  it('refuses PDF options on an Excel preview', async () => {
    const excel = await createTemplate(app, alice.accessToken, { ...buildTemplate(), outputFormats: ['pdf', 'excel'] });
    const res = await app.request('POST', `/api/templates/${excel.id}/preview`, { token: alice.accessToken, body: { variables: { customer: 'Ada' }, format: 'excel', output: { pdfa: '3b' } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'output.pdfa' } });
  });

  it('the render worker hands the output to the PDF tools with the watermarked preview', async () => {
    const calls: Array<{ pdf: Buffer; request: FinishRequest }> = [];
    const recorder: PdfTools = {
      async finish(pdf, request) {
        calls.push({ pdf, request });
        return pdf;
      },
      toImages: () => Promise.reject(new Error('not used')),
      merge: () => Promise.reject(new Error('not used')),
      close: () => Promise.resolve(),
    };
    const { services } = app;
    const projectId = randomUUID();
    const previewId = randomUUID();
    const keys = previewKeys(projectId, previewId);
    const template = buildTemplate() as unknown as PreviewRequest['template'];
    const request: PreviewRequest = { tenant: projectId, template, variables: { customer: 'Preview Pat' }, format: 'pdf', watermark: true, title: 'Letter', output: { pdfa: '3b' } };
    await services.storage.put(keys.request, Buffer.from(JSON.stringify(request)), 'application/json');
    const activities = createPreviewActivities({
      storage: services.storage,
      pdfRenderer: () => services.pdfRenderer,
      evaluator: services.evaluator,
      limits: renderLimitsOf(services.config),
      imageAllowlist: [],
      pdfTools: recorder,
    });
    const env = new MockActivityEnvironment(undefined, { interceptors: activityInterceptors().activity });
    const out = (await env.run(activities.renderPreview, { previewId, projectId })) as PreviewRenderOutput;
    expect(out).toMatchObject({ contentType: 'application/pdf', fileExtension: 'pdf' });
    expect(calls).toHaveLength(1);
    expect(calls[0].request).toMatchObject({ output: { pdfa: '3b' }, title: 'Letter' });
    expect(await squeezedText(calls[0].pdf)).toContain('DearPreviewPat');
    expect(await squeezedText(calls[0].pdf)).toContain('FORMWORKFREE');
  });
});
