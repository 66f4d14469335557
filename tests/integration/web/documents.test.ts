import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, signInThroughApp, startAppWithBrowser, withAppPage } from '../../support/browser';
import { GROWING_LINES_TEMPLATE, linesOf, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { pdfText } from '../../support/rendering-pdf';
import { createTemplate, publish } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * A job's detail in the dashboard (docs/web.md): why it failed, retry, delete; and the jobs list
 * exported as the API's CSV. A job fails here the way a real one does: its HTML is over the
 * renderer's limit.
 */
describe('document jobs in the dashboard', () => {
  const LIMIT = 64 * 1024;
  let app: TestApp;
  let browser: Browser;
  let p: DocumentProject;
  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser({ env: { RENDER_HTML_MAX_BYTES: String(LIMIT) } }));
    p = await setupDocumentProject(app, GROWING_LINES_TEMPLATE);
  });
  afterAll(() => closeAppWithBrowser(app, browser));

  const variables = linesOf;
  async function generate(passes: number, filename: string): Promise<string> {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', filename, variables: variables(passes) } });
    expect(res.status).toBe(201);
    await waitForJob(app, p.apiKey, res.body.jobId);
    return res.body.jobId as string;
  }

  it('shows why a job failed, retries it, deletes a job, and exports the list', async () => {
    const failed = await generate(100, 'too-long');
    const done = await generate(10, 'fine');
    const downloads = await mkdtemp(join(tmpdir(), 'jobs-'));
    await withAppPage(browser, 'document-jobs', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, p.user.email, p.user.password);
      await byRole(page, 'link', 'Documents').click();
      await byRole(page, 'button', 'Details of too-long').click();
      const dialog = await byRole(page, 'dialog', 'Document job').waitHandle();
      await page.waitForFunction((el) => el.textContent?.includes('Rendered HTML exceeds the limit'), {}, dialog);
      // The catalogued code beside the reason, as the API answers it.
      await page.waitForFunction((el) => el.textContent?.includes('Error code ERR_LIMIT_009'), {}, dialog);
      await expectWellBehaved(tab, app.url, 'job detail');
      await byRole(page, 'button', 'Retry').click();
      const retried = await waitFor(async () => {
        const jobs = await app.request('GET', '/api/documents/jobs?limit=10', { token: p.apiKey });
        return (jobs.body.jobs as { jobId: string; retryOf?: string }[]).find((j) => j.retryOf === failed);
      }, { what: 'the retry' });
      expect(retried.jobId).not.toBe(failed);

      await byRole(page, 'button', 'Details of fine').click();
      await byRole(page, 'link', 'Download').wait();
      await byRole(page, 'button', 'Delete').click();
      await waitFor(async () => (await app.request('GET', `/api/documents/jobs/${done}`, { token: p.apiKey })).status === 404, { what: 'the job deleted' });

      await byRole(page, 'button', 'Export the list (CSV)').click();
      const file = await waitFor(async () => (await readdir(downloads)).find((f) => f.endsWith('.csv')), { what: 'the exported list' });
      const csv = await readFile(join(downloads, file), 'utf8');
      expect(csv.split('\n')[0]).toMatch(/^jobId,status,format/);
      expect(csv).toContain(failed);
      expect(csv).not.toContain(done);
    }, { downloadPath: downloads });
  });

  it('generates from a form built from the variables, and a batch from a CSV file followed to its end', async () => {
    const template = await createTemplate(app, p.user.accessToken, {
      name: 'Greeting card',
      schema: {
        pageSize: 'A5',
        sections: [{ id: 'main', components: [{ id: 'hello', type: 'heading', props: { text: 'Hello {{customer}}' } }, { id: 'sum', type: 'text', props: { text: 'Owed: {{amount}} for {{items}}' } }] }],
      },
      variables: [
        { name: 'customer', type: 'string', required: true },
        { name: 'amount', type: 'number', required: true },
        { name: 'items', type: 'array', required: false, items: { type: 'string' } },
      ],
      constants: {},
      calculatedVariables: [],
    });
    await publish(app, p.user.accessToken, template.id);
    const folder = await mkdtemp(join(tmpdir(), 'batch-'));
    const csv = join(folder, 'cards.csv');
    await writeFile(csv, 'customer,amount,items,filename\nAda,12.5,"[""tea"",""cake""]",card-ada\nGrace,7,,card-grace\n"Hopper, Grace",3,[],card-hopper\n');
    await withAppPage(browser, 'generate-form-and-batch', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, p.user.email, p.user.password);
      await byRole(page, 'link', 'Greeting card').click();
      await byRole(page, 'textbox', 'customer').fill('Linus');
      await byRole(page, 'textbox', 'amount').fill('42');
      await expectWellBehaved(tab, app.url, 'generate form');
      await byRole(page, 'button', 'Generate').click();
      await byRole(page, 'heading', 'Documents').wait();
      const job = await waitFor(async () => {
        const jobs = await app.request('GET', `/api/documents/jobs?templateId=${template.id}`, { token: p.apiKey });
        const found = (jobs.body.jobs as { jobId: string; status: string }[])[0];
        return found && found.status === 'completed' ? found : undefined;
      }, { what: 'the generated document', timeoutMs: 60_000 });
      const detail = await app.request('GET', `/api/documents/jobs/${job.jobId}`, { token: p.apiKey });
      const pdf = Buffer.from(await (await fetch(detail.body.downloadUrl)).arrayBuffer());
      expect(await pdfText(pdf)).toMatch(/Hello Linus[\s\S]*Owed: 42/);

      await page.goBack();
      await byRole(page, 'heading', 'Greeting card').wait();
      const [chooser] = await Promise.all([page.waitForFileChooser(), byRole(page, 'button', 'Generate a batch from a file').click()]);
      await chooser.accept([csv]);
      const batch = await byRole(page, 'region', 'Batch').waitHandle();
      await page.waitForFunction((el) => el.textContent?.includes('3 of 3 ended: 3 completed'), { timeout: 120_000 }, batch);
    });
    const jobs = await app.request('GET', `/api/documents/jobs?templateId=${template.id}&limit=10`, { token: p.apiKey });
    expect((jobs.body.jobs as { filename: string | null }[]).map((j) => j.filename).sort()).toEqual(['card-ada', 'card-grace', 'card-hopper', null]);
  });
});
