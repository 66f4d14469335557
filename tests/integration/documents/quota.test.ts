import { runAdminCommand } from '../../../scripts/admin-commands';
import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { squeezedText } from '../../support/rendering-pdf';

describe('free quota and credits', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { FREE_DOCUMENTS_PER_MONTH: '3' } });
  });
  afterAll(() => app.close());

  const generate = (p: DocumentProject, extra: Record<string, unknown> = {}) =>
    app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'q' }, ...extra } });
  const admin = (...argv: string[]) => runAdminCommand(app.services.db, argv);

  it('never spends more free documents than the quota, even under concurrent requests', async () => {
    const p = await setupDocumentProject(app);
    const results = await Promise.all(Array.from({ length: 8 }, () => generate(p)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body).toMatchObject({ code: 'ERR_QUOTA_008', relatedInfo: { limit: 3, used: 3, requested: 1 } });
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1`, [p.projectId]);
    expect(n).toBe(3);
    expect(await admin('show', '--project', p.projectId)).toContain('free documents used this month 3');
  });

  it('gives the free document back when a job fails or is cancelled', async () => {
    const p = await setupDocumentProject(app);
    await app.stopWorker();
    try {
      const res = await generate(p);
      await app.request('POST', `/api/documents/jobs/${res.body.jobId}/cancel`, { token: p.apiKey });
    } finally {
      await app.startWorker();
    }
    const [row] = await app.services.db.query(`SELECT free_used FROM document_quota_usage WHERE project_id = $1`, [p.projectId]);
    expect(row.free_used).toBe(0);
  });

  it('refuses useCredit without credits, spends credits when granted, and leaves no watermark', async () => {
    const p = await setupDocumentProject(app);
    const none = await generate(p, { useCredit: true });
    expect(none.status).toBe(429);
    expect(none.body).toMatchObject({ code: 'ERR_QUOTA_011', relatedInfo: { required: 1, balance: 0 } });

    expect(await admin('grant-credits', '--project', p.projectId, '--amount', '2', '--reason', 'test pack')).toBe(
      `granted 2 credits to ${(await app.services.db.query(`SELECT slug FROM projects WHERE id = $1`, [p.projectId]))[0].slug}; balance 2`,
    );
    const paid = await generate(p, { useCredit: true });
    expect(paid.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, paid.body.jobId);
    expect(job.watermarked).toBe(false);
    expect(await squeezedText((await download(job.downloadUrl)).body)).not.toContain('FORMWORKFREE');

    const ledger = await app.services.db.query(`SELECT delta, reason FROM credit_ledger WHERE project_id = $1 ORDER BY created_at`, [p.projectId]);
    expect(ledger).toEqual([
      { delta: 2, reason: 'test pack' },
      { delta: -1, reason: 'document generation' },
    ]);
  });

  it('never overspends credits under concurrent requests', async () => {
    const p = await setupDocumentProject(app);
    await admin('grant-credits', '--project', p.projectId, '--amount', '3');
    const results = await Promise.all(Array.from({ length: 7 }, () => generate(p, { useCredit: true })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.code === 'ERR_QUOTA_011')).toBe(true);
    expect(await admin('show', '--project', p.projectId)).toContain('credits 0');
  });

  it('charges a batch as a whole: refused entirely when the quota cannot cover it', async () => {
    const p = await setupDocumentProject(app);
    const batch = await app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'pdf', documents: Array.from({ length: 4 }, () => ({ variables: { customer: 'b' } })) },
    });
    expect(batch.status).toBe(429);
    expect(batch.body.code).toBe('ERR_QUOTA_008');
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1`, [p.projectId]);
    expect(n).toBe(0);
  });

  it('sets a project plan and refuses bad admin input', async () => {
    const p = await setupDocumentProject(app);
    expect(await admin('set-plan', '--project', p.projectId, '--plan', 'growth')).toContain('growth plan');
    expect(await admin('show', '--project', p.projectId)).toContain('plan growth');
    await expect(admin('set-plan', '--project', p.projectId, '--plan', 'platinum')).rejects.toThrow(/--plan must be one of/);
    await expect(admin('grant-credits', '--project', p.projectId, '--amount', '-5')).rejects.toThrow(/positive whole number/);
    await expect(admin('show', '--project', 'no-such-project')).rejects.toThrow(/no project/);
    await expect(admin('explode', '--project', p.projectId)).rejects.toThrow(/unknown command/);
  });
});
