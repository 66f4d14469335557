import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { buildTemplate } from '../../support/templates';

/**
 * Output bounds (docs/security.md, "Uploads, output and mail"): RENDER_OUTPUT_MAX_BYTES caps the
 * rendered file of previews (400 ERR_LIMIT_011) and generations (the job fails with it), and
 * PREVIEW_RATE_LIMIT_PER_MINUTE is one budget per project, whatever credential asks.
 */
describe('Output bounds: rendered size and preview rate', () => {
  const LIMIT = 16 * 1024;
  const PREVIEWS = 4;
  let app: TestApp;
  let p: DocumentProject;
  let other: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp({ env: { RENDER_OUTPUT_MAX_BYTES: String(LIMIT), PREVIEW_RATE_LIMIT_PER_MINUTE: String(PREVIEWS), PREVIEW_RATE_LIMIT_WINDOW_SECONDS: '3600' } });
    p = await setupDocumentProject(app, buildTemplate());
    other = await setupDocumentProject(app, buildTemplate());
  });
  afterAll(() => app.close());

  // Random labels barely compress: 3,000 rows are far over 16 KB in either format; one row is not (Excel).
  const variables = (rows: number) => ({ customer: 'Ada', items: Array.from({ length: rows }, () => ({ label: randomBytes(24).toString('hex'), amount: 1 })) });

  it('previews: 400 ERR_LIMIT_011 for a file over the limit, the file under it', async () => {
    const overPdf = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token: p.user.accessToken, body: { format: 'pdf', variables: variables(3000) } });
    expect(overPdf.status).toBe(400);
    expect(overPdf.body).toMatchObject({ code: 'ERR_LIMIT_011', relatedInfo: { limit: LIMIT } });

    const overExcel = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token: p.user.accessToken, body: { format: 'excel', variables: variables(3000) } });
    expect(overExcel.status).toBe(400);
    expect(overExcel.body.code).toBe('ERR_LIMIT_011');

    const under = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token: p.user.accessToken, body: { format: 'excel', variables: variables(1) } });
    expect(under.status).toBe(200);
    expect(under.headers.get('content-type')).toMatch(/spreadsheetml/);
  });

  it('generation: the job fails with ERR_LIMIT_011 and stores no file', async () => {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables: variables(3000) } });
    expect(res.status).toBe(201);
    const failed = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(failed.status).toBe('failed');
    expect(failed.downloadUrl ?? null).toBeNull();
    const [row] = await app.services.db.query(`SELECT error_code FROM document_jobs WHERE id = $1`, [res.body.jobId]);
    expect(row.error_code).toBe('ERR_LIMIT_011');
  });

  it(`previews share one budget per project (${PREVIEWS} a minute): 429 ERR_LIMIT_014 for JWT and API key alike, other projects unaffected`, async () => {
    // The first test used 3 of p's previews; one more is allowed, then the project is refused whoever asks.
    const body = { format: 'excel', variables: variables(1) };
    const last = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token: p.apiKey, body });
    expect(last.status).toBe(200);
    for (const token of [p.user.accessToken, p.apiKey]) {
      const refused = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token, body });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'ERR_LIMIT_014', relatedInfo: { limit: PREVIEWS, retryAfter: expect.any(Number) } });
    }
    const elsewhere = await app.request('POST', `/api/templates/${other.templateId}/preview`, { token: other.user.accessToken, body });
    expect(elsewhere.status).toBe(200);
  });
});
