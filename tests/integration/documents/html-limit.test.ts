import { startTestApp, type TestApp } from '../../support/app';
import { GROWING_LINES_TEMPLATE, linesOf, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';

/**
 * RENDER_HTML_MAX_BYTES through the service: a preview answers 400 ERR_LIMIT_009, a generation
 * job fails with it, and a document under the limit still prints.
 */
describe('HTML size limit through the API', () => {
  const LIMIT = 64 * 1024;
  let app: TestApp;
  let p: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp({ env: { RENDER_HTML_MAX_BYTES: String(LIMIT) } });
    p = await setupDocumentProject(app, GROWING_LINES_TEMPLATE);
  });
  afterAll(() => app.close());

  // About 1 KB per pass: 10 passes print, 100 passes (~100 KB of HTML) are over the 64 KB limit.
  const variables = linesOf;

  it('previews: 400 ERR_LIMIT_009 over the limit, a PDF under it', async () => {
    const token = p.user.accessToken;
    const over = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token, body: { format: 'pdf', variables: variables(100) } });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: 'ERR_LIMIT_009', relatedInfo: { limit: LIMIT } });

    const under = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token, body: { format: 'pdf', variables: variables(10) } });
    expect(under.status).toBe(200);
    expect(under.headers.get('content-type')).toBe('application/pdf');
  });

  it('generation: the job fails with ERR_LIMIT_009 and says why; one under the limit completes', async () => {
    const over = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: variables(100) } });
    expect(over.status).toBe(201);
    const failed = await waitForJob(app, p.apiKey, over.body.jobId);
    expect(failed.status).toBe('failed');
    expect(failed.errorMessage).toContain(`Rendered HTML exceeds the limit of ${LIMIT} bytes`);
    const [row] = await app.services.db.query(`SELECT error_code FROM document_jobs WHERE id = $1`, [over.body.jobId]);
    expect(row.error_code).toBe('ERR_LIMIT_009');

    const under = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: variables(10) } });
    expect((await waitForJob(app, p.apiKey, under.body.jobId)).status).toBe('completed');
  });
});
