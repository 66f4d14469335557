import { addCredits } from '../../../db/documents/billing';
import { startTestApp, type TestApp } from '../../support/app';
import { GROWING_LINES_TEMPLATE, linesOf, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { addMember, createTeam, inTeam } from '../../support/teams';
import { createTemplate, publish } from '../../support/templates';

/**
 * What the dashboard's Usage page reads (docs/web.md "Usage"): GET /api/documents/quota (this
 * month's free documents against the quota, credits left) and the analytics' per-day completed and
 * failed counts and per-template figures, each checked against the jobs, quota and credit rows.
 */
describe('usage: quota, credits and analytics per day and per template', () => {
  const LIMIT = 64 * 1024;
  let app: TestApp;
  let p: DocumentProject;
  let second: { id: string };
  beforeAll(async () => {
    app = await startTestApp({ env: { RENDER_HTML_MAX_BYTES: String(LIMIT), FREE_DOCUMENTS_PER_MONTH: '40' } });
    p = await setupDocumentProject(app, { ...GROWING_LINES_TEMPLATE, name: 'Lines' });
    second = await createTemplate(app, p.user.accessToken, { ...GROWING_LINES_TEMPLATE, name: 'Other lines' });
    await publish(app, p.user.accessToken, second.id);
  });
  afterAll(() => app.close());

  async function generate(templateId: string, rows: number, extra: Record<string, unknown> = {}): Promise<any> {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId, format: 'pdf', variables: linesOf(rows), ...extra } });
    expect(res.status).toBe(201);
    return waitForJob(app, p.apiKey, res.body.jobId);
  }

  it('answers the free quota used this month and the credits left, as generation spends them', async () => {
    const empty = await app.request('GET', '/api/documents/quota', { token: p.apiKey });
    expect(empty.status).toBe(200);
    const now = new Date();
    const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(empty.body).toEqual({ month: now.toISOString().slice(0, 7), resetsAt, freeDocuments: { limit: 40, used: 0, remaining: 40 }, credits: { balance: 0 } });

    await addCredits(app.services.db, p.projectId, 5, 'test pack');
    expect((await generate(p.templateId, 3)).status).toBe('completed');
    expect((await generate(p.templateId, 100)).status).toBe('failed');
    expect((await generate(second.id, 3, { useCredit: true })).status).toBe('completed');

    const res = await app.request('GET', '/api/documents/quota', { token: p.apiKey });
    // The failed job's free document was given back; the credit document is not a free one.
    expect(res.body).toMatchObject({ freeDocuments: { limit: 40, used: 1, remaining: 39 }, credits: { balance: 4 } });
    const [row] = await app.services.db.query(`SELECT free_used FROM document_quota_usage WHERE project_id = $1 AND month = $2`, [p.projectId, now.toISOString().slice(0, 7)]);
    expect(row.free_used).toBe(1);
    const [credits] = await app.services.db.query(`SELECT balance FROM credit_balances WHERE project_id = $1`, [p.projectId]);
    expect(credits.balance).toBe(4);

    expect((await app.request('GET', '/api/documents/quota?month=2020-01', { token: p.apiKey })).status).toBe(400);
  });

  it('counts each day\'s completed and failed documents and each template\'s, by name', async () => {
    const start = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString();
    const res = await app.request('GET', `/api/documents/analytics?startDate=${start}`, { token: p.apiKey });
    expect(res.status).toBe(200);
    const rows = await app.services.db.query(
      `SELECT template_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, status FROM document_jobs WHERE project_id = $1`,
      [p.projectId],
    );
    expect(rows).toHaveLength(3);
    const days = [...new Set(rows.map((r: any) => r.date))].sort();
    expect(res.body.byDate).toEqual(
      days.map((date) => {
        const of = rows.filter((r: any) => r.date === date);
        return { date, count: of.length, completed: of.filter((r: any) => r.status === 'completed').length, failed: of.filter((r: any) => r.status === 'failed').length };
      }),
    );
    expect(res.body.byTemplate).toEqual([
      { templateId: p.templateId, templateName: 'Lines', total: 2, completed: 1, failed: 1, successRate: 50 },
      { templateId: second.id, templateName: 'Other lines', total: 1, completed: 1, failed: 0, successRate: 100 },
    ]);
    expect(res.body).toMatchObject({ totalDocuments: 3, completedDocuments: 2, failedDocuments: 1, successRate: 66.67 });

    // A renamed template is listed by its name now; a period before the documents has none.
    expect((await app.request('PUT', `/api/templates/${second.id}`, { token: p.user.accessToken, body: { name: 'Renamed lines' } })).status).toBe(200);
    const renamed = await app.request('GET', `/api/documents/analytics?startDate=${start}`, { token: p.apiKey });
    expect(renamed.body.byTemplate.map((t: any) => t.templateName)).toEqual(['Lines', 'Renamed lines']);
    const before = await app.request('GET', '/api/documents/analytics?startDate=2020-01-01T00:00:00Z&endDate=2020-01-31T00:00:00Z', { token: p.apiKey });
    expect(before.body).toMatchObject({ byDate: [], byTemplate: [], totalDocuments: 0 });
  });

  it('lets a viewer of a project read its quota and analytics, and no one outside it', async () => {
    const team = await createTeam(app, p.user);
    const viewer = await addMember(app, p.user, team.id, 'viewer');
    const quota = await app.request('GET', '/api/documents/quota', { token: viewer.accessToken, headers: inTeam(team.id) });
    expect(quota.status).toBe(200);
    expect(quota.body.freeDocuments).toEqual({ limit: 40, used: 0, remaining: 40 });
    const analytics = await app.request('GET', '/api/documents/analytics', { token: viewer.accessToken, headers: inTeam(team.id) });
    expect(analytics.body).toMatchObject({ totalDocuments: 0, byTemplate: [] });
    // The viewer's own personal project is another project: p's numbers are not there.
    const own = await app.request('GET', '/api/documents/quota', { token: viewer.accessToken });
    expect(own.body.credits.balance).toBe(0);
    expect((await app.request('GET', '/api/documents/quota', { token: viewer.accessToken, headers: inTeam(p.projectId) })).status).toBe(403);
  });
});
