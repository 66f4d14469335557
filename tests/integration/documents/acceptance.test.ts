import { randomUUID } from 'node:crypto';
import { DocumentJobEntity } from '../../../db/documents/document-job.entity';
import { insertJobs } from '../../../db/documents/job-state';
import { createDocumentActivities } from '../../../activities/documents';
import { documentActivityDeps } from '../../../worker/documents';
import { startTestApp, type TestApp } from '../../support/app';
import { GROWING_LINES_TEMPLATE, linesOf, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Issue 36, items 2: what can be known when a document is asked for is refused then (docs/documents.md
 * "Checks at acceptance"), and a render that still fails says why with a catalogued `errorCode` on the
 * job, in `document.failed` and in the jobs export, never with Chromium's own words.
 */
describe('documents: checks at acceptance, and the errorCode of a failed job', () => {
  const HTML_LIMIT = 64 * 1024;
  let app: TestApp;
  let receiver: WebhookReceiver;
  let p: DocumentProject;
  let images: DocumentProject;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ env: { RENDER_HTML_MAX_BYTES: String(HTML_LIMIT), OUTBOUND_ALLOWLIST: '127.0.0.1', DOCUMENT_VARIABLES_MAX_BYTES: String(256 * 1024) } });
    p = await setupDocumentProject(app, GROWING_LINES_TEMPLATE);
    images = await setupDocumentProject(app, {
      schema: { pageSize: 'A4', sections: [{ id: 'main', components: [{ id: 'logo', type: 'image', props: { src: '{{logo}}', alt: 'Logo' } }] }] },
      variables: [{ name: 'logo', type: 'image', required: true }],
    });
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
  });

  const generate = (body: Record<string, unknown>, project = p) => app.request('POST', '/api/documents/generate', { token: project.apiKey, body: { templateId: project.templateId, format: 'pdf', ...body } });
  const jobCount = async (projectId: string) => (await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1`, [projectId]))[0].n as number;

  it('refuses a 2 MB unbroken string in a variable at once, naming the variable and the limit, and creates no job', async () => {
    const before = await jobCount(p.projectId);
    const res = await generate({ variables: { rows: ['one'], note: 'x'.repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_LIMIT_017', relatedInfo: { field: 'note', limit: 100_000, size: 2 * 1024 * 1024 } });
    expect(await jobCount(p.projectId)).toBe(before);
    // The same in a batch names the document, and a preview the body's field.
    const batch = await app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'pdf', documents: [{ variables: linesOf(1) }, { variables: { rows: ['a', 'x'.repeat(100_001)], note: '' } }] },
    });
    expect([batch.status, batch.body.code, batch.body.relatedInfo?.field]).toEqual([400, 'ERR_LIMIT_017', 'documents[1].variables.rows[1]']);
    const preview = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token: p.user.accessToken, body: { format: 'pdf', variables: { rows: [], note: 'x'.repeat(100_001) } } });
    expect([preview.status, preview.body.code, preview.body.relatedInfo?.field]).toEqual([400, 'ERR_LIMIT_017', 'variables.note']);
  });

  it('refuses 12,000 rows against the 10,000 loop limit at once, naming the array, the component and the limit', async () => {
    const rows = Array.from({ length: 12_000 }, (_, i) => `r${i}`);
    const res = await generate({ variables: { rows, note: 'n' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_LIMIT_007', relatedInfo: { field: 'rows', componentId: 'rows', limit: 10_000, size: 12_000 } });
    const preview = await app.request('POST', `/api/templates/${p.templateId}/preview`, { token: p.user.accessToken, body: { format: 'pdf', variables: { rows, note: 'n' } } });
    expect([preview.status, preview.body.code, preview.body.relatedInfo?.field]).toEqual([400, 'ERR_LIMIT_007', 'variables.rows']);
  });

  it('refuses variables past the whole-payload cap', async () => {
    const rows = Array.from({ length: 400 }, (_, i) => `${i}`.padEnd(1000, '.'));
    const res = await generate({ variables: { rows, note: 'n' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_LIMIT_018', relatedInfo: { field: 'variables', limit: 256 * 1024 } });
  });

  it('refuses an image the render would not load (a host outside IMAGE_HOST_ALLOWLIST), naming the setting', async () => {
    const res = await generate({ variables: { logo: 'https://images.example.org/logo.png' } }, images);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_OUTBOUND_001', relatedInfo: { field: 'logo', host: 'images.example.org', setting: 'IMAGE_HOST_ALLOWLIST' } });
    expect(res.body.message).toContain('IMAGE_HOST_ALLOWLIST');
    // A data: image is drawn from the request itself: accepted.
    const inline = await generate({ variables: { logo: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=' } }, images);
    expect(inline.status).toBe(201);
  });

  it('a job that fails in rendering carries its errorCode in the job, in document.failed and in the export', async () => {
    const hook = await app.request('POST', '/api/webhooks', { token: p.user.accessToken, body: { url: `${receiver.url}/failed`, events: ['document.failed'] } });
    expect(hook.status).toBe(201);
    const res = await generate({ variables: linesOf(100) });
    expect(res.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'ERR_LIMIT_009', errorMessage: expect.stringContaining(`${HTML_LIMIT} bytes`) });

    const event = await waitFor(() => receiver.requests.find((r) => r.path === '/failed' && r.json?.data?.jobId === res.body.jobId), { what: 'document.failed' });
    expect(event.json).toMatchObject({ type: 'document.failed', data: { jobId: res.body.jobId, status: 'failed', errorCode: 'ERR_LIMIT_009', errorMessage: job.errorMessage } });

    const json = await app.request('GET', '/api/documents/jobs/export?format=json&status=failed', { token: p.apiKey });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.text)).toEqual(expect.arrayContaining([expect.objectContaining({ jobId: res.body.jobId, errorCode: 'ERR_LIMIT_009' })]));
    const csv = await app.request('GET', '/api/documents/jobs/export?format=csv&status=failed', { token: p.apiKey });
    const [header, ...lines] = csv.text.trim().split(/\r?\n/);
    const columns = header.split(',');
    expect(columns).toContain('errorCode');
    const line = lines.find((l) => l.startsWith(res.body.jobId));
    expect(line?.split(',')[columns.indexOf('errorCode')]).toBe('ERR_LIMIT_009');
  });

  /** A queued job whose workflow is never started (no outbox entry), to be failed the way its workflow fails it. */
  async function queuedJob(): Promise<DocumentJobEntity> {
    const [{ version }] = await app.services.db.query(`SELECT max(version)::int AS version FROM template_versions WHERE template_id = $1`, [p.templateId]);
    const job = Object.assign(new DocumentJobEntity(), {
      id: randomUUID(),
      projectId: p.projectId,
      batchId: null,
      batchIndex: null,
      apiKeyId: null,
      userId: null,
      templateId: p.templateId,
      templateVersion: version,
      kind: 'render',
      mergeParts: null,
      status: 'queued',
      format: 'pdf',
      variables: linesOf(1),
      billing: 'free',
      metadata: null,
      output: null,
      filename: null,
      attempts: 0,
      artefactKey: null,
      artefactSize: null,
      artefactExpiredAt: null,
      errorCode: null,
      errorMessage: null,
      retryOf: null,
      generationMs: null,
      createdAt: new Date(),
      startedAt: null,
      completedAt: null,
      workflowPending: false,
      workflowStartedAt: null,
    });
    await insertJobs(app.services.db.manager, [job]);
    return job;
  }

  it("a render that gives up on Chromium's own error fails the job with ERR_RENDER_001 and the catalogue's words, never the browser's", async () => {
    const job = await queuedJob();
    const activities = createDocumentActivities(documentActivityDeps(app.services));
    const outcome = await activities.markJobFailed({ jobId: job.id, message: 'Rendering failed: Navigation timeout of 30000 ms exceeded' });
    expect(outcome.status).toBe('failed');

    const read = await app.request('GET', `/api/documents/jobs/${job.id}`, { token: p.apiKey });
    expect(read.body).toMatchObject({ status: 'failed', errorCode: 'ERR_RENDER_001', errorMessage: expect.stringMatching(/^Rendering did not finish in time/) });
    const exported = await app.request('GET', '/api/documents/jobs/export?format=json&status=failed', { token: p.apiKey });
    const row = (JSON.parse(exported.text) as Array<Record<string, unknown>>).find((r) => r.jobId === job.id);
    expect(row).toMatchObject({ errorCode: 'ERR_RENDER_001' });
    for (const text of [read.text, JSON.stringify(row), JSON.stringify(outcome)]) expect(text).not.toMatch(/Navigation timeout|30000 ms/);
  });

  it('a render whose workflow reports a catalogued failure keeps its code and words, not ERR_RENDER_001', async () => {
    const job = await queuedJob();
    const activities = createDocumentActivities(documentActivityDeps(app.services));
    // What the workflow passes for an AppError that ended the render activity (process-job.ts `catalogued`).
    await activities.markJobFailed({ jobId: job.id, message: 'Merging failed: qpdf needed more memory than allowed', code: 'ERR_OUTPUT_004', detail: 'qpdf needed more memory than allowed' });
    const read = await app.request('GET', `/api/documents/jobs/${job.id}`, { token: p.apiKey });
    expect(read.body).toMatchObject({ status: 'failed', errorCode: 'ERR_OUTPUT_004', errorMessage: 'qpdf needed more memory than allowed' });
    // A code outside the catalogue is not trusted: what the renderer gave up on.
    const other = await queuedJob();
    await activities.markJobFailed({ jobId: other.id, message: 'Rendering failed: boom', code: 'ERR_NOPE_999', detail: 'boom' });
    expect((await app.request('GET', `/api/documents/jobs/${other.id}`, { token: p.apiKey })).body).toMatchObject({ status: 'failed', errorCode: 'ERR_RENDER_001' });
  });
});
