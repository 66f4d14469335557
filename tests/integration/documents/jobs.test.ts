import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { createTemplate, publish } from '../../support/templates';
import { waitFor } from '../../support/wait';

describe('document jobs: list, export, retry, cancel, delete, analytics', () => {
  let app: TestApp;
  let p: DocumentProject;
  // Three loop iterations at most, and a letter that lists its items twice: two items pass the checks at
  // acceptance (each table's array is within the limit) and fail at render time, where the two tables share
  // the budget (docs/documents.md "Checks at acceptance"). More than three would be refused at once.
  const listedTwice = {
    schema: {
      pageSize: 'A4' as const,
      sections: [
        {
          id: 'main',
          components: [
            { id: 'title', type: 'heading', props: { text: 'Dear {{customer}}', level: 1 } },
            { id: 'lines', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Item', field: 'label' }] } },
            { id: 'again', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Amount', field: 'amount', format: 'number' }] } },
          ],
        },
      ],
    },
  };
  beforeAll(async () => {
    app = await startTestApp({ env: { LOOP_MAX_ITERATIONS: '3' } });
    p = await setupDocumentProject(app, listedTwice);
  });
  afterAll(() => app.close());

  const generate = async (customer: string, items: unknown[] = [], format = 'excel') => {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format, variables: { customer, items } } });
    expect(res.status).toBe(201);
    return res.body.jobId as string;
  };
  const tooMany = Array.from({ length: 2 }, (_, i) => ({ label: `row ${i}`, amount: i }));
  // Jobs queued by earlier tests (bulk retries) may still be running: analytics compare counts.
  const settled = () =>
    waitFor(async () => {
      const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1 AND status IN ('queued', 'processing')`, [p.projectId]);
      return n === 0;
    }, { what: 'open jobs to end' });

  it('records a render failure on the job, with its message, and retries it as a new job', async () => {
    const jobId = await generate('fails', tooMany);
    const failed = await waitForJob(app, p.apiKey, jobId);
    expect(failed).toMatchObject({ status: 'failed', errorCode: 'ERR_LIMIT_007', errorMessage: expect.stringMatching(/loop|iteration/i) });
    expect(failed.downloadUrl).toBeUndefined();

    const retry = await app.request('POST', `/api/documents/jobs/${jobId}/retry`, { token: p.apiKey });
    // The retry job is a created resource: 201 with Location at its GET URL.
    expect(retry.status).toBe(201);
    expect(retry.headers.get('location')).toBe(`${app.url}/api/documents/jobs/${retry.body.jobId}`);
    expect(retry.body).toMatchObject({ status: 'queued', message: expect.any(String) });
    expect(retry.body.jobId).not.toBe(jobId);
    const again = await waitForJob(app, p.apiKey, retry.body.jobId);
    expect(again).toMatchObject({ status: 'failed', retryOf: jobId });

    const ok = await generate('fine');
    await waitForJob(app, p.apiKey, ok);
    const notFailed = await app.request('POST', `/api/documents/jobs/${ok}/retry`, { token: p.apiKey });
    expect(notFailed.status).toBe(409);
    expect(notFailed.body.code).toBe('ERR_JOB_002');
  });

  it('lists jobs newest first with offset, limit, status and template filters, and a total', async () => {
    const ids = [await generate('list a'), await generate('list b'), await generate('list c')];
    await Promise.all(ids.map((id) => waitForJob(app, p.apiKey, id)));
    const page = await app.request('GET', '/api/documents/jobs?limit=2&offset=0', { token: p.apiKey });
    expect(page.status).toBe(200);
    expect(page.body.jobs).toHaveLength(2);
    expect(page.body.jobs[0].jobId).toBe(ids[2]);
    expect(page.body.total).toBeGreaterThanOrEqual(3);
    const completed = await app.request('GET', `/api/documents/jobs?status=completed&templateId=${p.templateId}&limit=100`, { token: p.apiKey });
    expect(completed.body.jobs.every((j: any) => j.status === 'completed' && j.downloadUrl)).toBe(true);
    expect(completed.body.total).toBe(completed.body.jobs.length);
    const bad = await app.request('GET', '/api/documents/jobs?limit=101', { token: p.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.relatedInfo.field).toBe('limit');
  });

  it('refuses to retry a job whose template was deleted: 404 ERR_TMPL_002, and queues nothing', async () => {
    const doomed = await createTemplate(app, p.user.accessToken, { name: 'Doomed Letter', ...listedTwice });
    await publish(app, p.user.accessToken, doomed.id);
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: doomed.id, format: 'excel', variables: { customer: 'doomed', items: tooMany } } });
    expect(res.status).toBe(201);
    expect(await waitForJob(app, p.apiKey, res.body.jobId)).toMatchObject({ status: 'failed' });
    expect((await app.request('DELETE', `/api/templates/${doomed.id}`, { token: p.user.accessToken })).status).toBe(200);
    const retry = await app.request('POST', `/api/documents/jobs/${res.body.jobId}/retry`, { token: p.apiKey });
    expect([retry.status, retry.body.code, retry.body.relatedInfo]).toEqual([404, 'ERR_TMPL_002', { templateId: doomed.id }]);
    expect(await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE retry_of = $1`, [res.body.jobId])).toEqual([{ n: 0 }]);
  });

  it('filters the list by templateId given as an id, a shortId or a slug, like every templateId', async () => {
    const other = await createTemplate(app, p.user.accessToken, { name: 'Filtered Letter' });
    await publish(app, p.user.accessToken, other.id);
    const otherJob = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: other.slug, format: 'excel', variables: { customer: 'other', items: [] } } });
    expect(otherJob.status).toBe(201);
    const mine = await generate('filter mine');
    const list = (templateId: string) => app.request('GET', `/api/documents/jobs?limit=100&templateId=${encodeURIComponent(templateId)}`, { token: p.apiKey });
    for (const ref of [other.id, other.shortId, other.slug, other.slug.toUpperCase()]) {
      const res = await list(ref);
      expect([ref, res.status, res.body.total, res.body.jobs.map((j: any) => j.jobId)]).toEqual([ref, 200, 1, [otherJob.body.jobId]]);
    }
    const byFirst = await list(p.templateSlug);
    expect(byFirst.status).toBe(200);
    expect(byFirst.body.jobs.map((j: any) => j.jobId)).toContain(mine);
    expect(byFirst.body.jobs.map((j: any) => j.jobId)).not.toContain(otherJob.body.jobId);
    expect(byFirst.body.jobs.every((j: any) => j.templateId === p.templateId)).toBe(true);
    // A reference that names no template of the project matches no job, as an unknown id does.
    for (const ref of ['no-such-template', 'etpl_nosuchtemplate', '00000000-0000-4000-8000-000000000000', "x' OR '1'='1"]) {
      const res = await list(ref);
      expect([ref, res.status, res.body]).toEqual([ref, 200, { jobs: [], total: 0, offset: 0, limit: 100 }]);
    }
    // Another project's template is no template of this project.
    const stranger = await setupDocumentProject(app);
    expect((await app.request('GET', `/api/documents/jobs?templateId=${p.templateSlug}`, { token: stranger.apiKey })).body.total).toBe(0);
    const tooLong = await list('x'.repeat(201));
    expect([tooLong.status, tooLong.body.code, tooLong.body.relatedInfo?.field]).toEqual([400, 'ERR_VALID_001', 'templateId']);
  });

  it('exports jobs as CSV (default) and JSON, with status and date filters', async () => {
    const csv = await app.request('GET', '/api/documents/jobs/export?status=completed', { token: p.apiKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="jobs-\d{4}-\d\d-\d\d\.csv"/);
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe('jobId,status,format,templateId,templateVersion,batchId,filename,errorCode,errorMessage,metadata,createdAt,completedAt');
    expect(lines.slice(1).every((l) => l.split(',')[1] === 'completed')).toBe(true);

    const json = await app.request('GET', '/api/documents/jobs/export?format=json', { token: p.apiKey });
    expect(json.headers.get('content-type')).toContain('application/json');
    const all = JSON.parse(json.text);
    const total = (await app.request('GET', '/api/documents/jobs', { token: p.apiKey })).body.total;
    expect(all).toHaveLength(total);

    const future = await app.request('GET', `/api/documents/jobs/export?format=json&startDate=${new Date(Date.now() + 86400000).toISOString()}`, { token: p.apiKey });
    expect(JSON.parse(future.text)).toEqual([]);
  });

  it('streams an export far larger than one page', async () => {
    await app.services.db.query(
      `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, created_at)
       SELECT gen_random_uuid(), $1, $2, 1, 'pdf', 'failed', '{}'::jsonb, 'free', now() - make_interval(secs => g)
         FROM generate_series(1, 2500) g`,
      [p.projectId, p.templateId],
    );
    const csv = await app.request('GET', '/api/documents/jobs/export?status=failed', { token: p.apiKey });
    const rows = csv.text.trim().split('\n').slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(2500);
    expect(new Set(rows.map((r) => r.split(',')[0])).size).toBe(rows.length);
  });

  it('cancels a queued job: the job says cancelled and its workflow is cancelled', async () => {
    await app.stopWorker();
    try {
      const jobId = await generate('never rendered');
      const res = await app.request('POST', `/api/documents/jobs/${jobId}/cancel`, { token: p.apiKey });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ jobId, status: 'cancelled' });
      const desc = await waitFor(async () => {
        const d = await app.services.temporal.workflow.getHandle(jobId).describe();
        return d.raw.workflowExecutionInfo?.historyLength && d;
      });
      expect(desc.workflowId).toBe(jobId);
      const again = await app.request('POST', `/api/documents/jobs/${jobId}/cancel`, { token: p.apiKey });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('ERR_JOB_003');
    } finally {
      await app.startWorker();
    }
  });

  it('deletes a job with its artefact, alone or in bulk', async () => {
    const one = await generate('delete me');
    await waitForJob(app, p.apiKey, one);
    const [{ artefact_key: key }] = await app.services.db.query(`SELECT artefact_key FROM document_jobs WHERE id = $1`, [one]);
    expect(await app.services.storage.exists(key)).toBe(true);
    const del = await app.request('DELETE', `/api/documents/jobs/${one}`, { token: p.apiKey });
    expect(del.status).toBe(204);
    expect(await app.services.storage.exists(key)).toBe(false);
    expect((await app.request('GET', `/api/documents/jobs/${one}`, { token: p.apiKey })).status).toBe(404);

    const two = [await generate('bulk 1'), await generate('bulk 2')];
    await Promise.all(two.map((id) => waitForJob(app, p.apiKey, id)));
    const bulk = await app.request('DELETE', '/api/documents/jobs/bulk', { token: p.apiKey, body: { jobIds: [...two, one] } });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ deleted: 2, message: expect.any(String) });
    const empty = await app.request('DELETE', '/api/documents/jobs/bulk', { token: p.apiKey, body: { jobIds: [] } });
    expect(empty.status).toBe(400);
  });

  it('retries failed jobs in bulk, skipping the others', async () => {
    const failed = [await generate('f1', tooMany), await generate('f2', tooMany)];
    const fine = await generate('ok');
    await Promise.all([...failed, fine].map((id) => waitForJob(app, p.apiKey, id)));
    const res = await app.request('POST', '/api/documents/jobs/bulk/retry', { token: p.apiKey, body: { jobIds: [...failed, fine] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ queued: 2 });
  });

  it('reports analytics computed over the jobs, in both published forms', async () => {
    await settled();
    const res = await app.request('GET', '/api/documents/analytics', { token: p.apiKey });
    expect(res.status).toBe(200);
    const [counts] = await app.services.db.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM document_jobs WHERE project_id = $1 AND created_at >= now() - interval '30 days'`,
      [p.projectId],
    );
    expect(res.body).toMatchObject({
      totalDocuments: counts.total,
      completedDocuments: counts.completed,
      failedDocuments: counts.failed,
      summary: { totalDocuments: counts.total, successfulDocuments: counts.completed, failedDocuments: counts.failed },
      byStatus: expect.objectContaining({ completed: counts.completed, failed: counts.failed }),
      byFormat: expect.objectContaining({ pdf: expect.any(Number), excel: expect.any(Number) }),
      period: { startDate: expect.any(String), endDate: expect.any(String) },
    });
    expect(res.body.successRate).toBeCloseTo((counts.completed / (counts.completed + counts.failed)) * 100, 1);
    expect(res.body.avgGenerationTimeMs).toBeGreaterThan(0);
    expect(res.body.byDate.reduce((a: number, d: any) => a + d.count, 0)).toBe(counts.total);
    const inverted = await app.request('GET', `/api/documents/analytics?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z`, { token: p.apiKey });
    expect(inverted.status).toBe(400);
  });

  it('feeds template analytics from the generated documents', async () => {
    await settled();
    const res = await app.request('GET', `/api/templates/${p.templateId}/analytics?period=7d`, { token: p.apiKey });
    expect(res.status).toBe(200);
    const [c] = await app.services.db.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM document_jobs WHERE template_id = $1 AND created_at >= now() - interval '7 days'`,
      [p.templateId],
    );
    expect(c.total).toBeGreaterThan(0);
    expect(res.body.usage).toMatchObject({ total: c.total, last7Days: c.total, last30Days: c.total });
    expect(res.body.performance).toMatchObject({ failedCount: c.failed, successRate: Math.round((c.completed / (c.completed + c.failed)) * 10000) / 100 });
    expect(res.body.performance.avgGenerationTimeMs).toBeGreaterThan(0);
    expect(res.body.trend.reduce((a: number, d: any) => a + d.count, 0)).toBe(c.total);
  });
});
