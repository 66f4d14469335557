import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { makeCertificates } from '../../support/signing';
import { waitFor } from '../../support/wait';

const run = promisify(execFile);

/**
 * The generate form's output options (docs/web.md "Generate"): a person asks for a PDF/A-3b invoice
 * with its Factur-X XML, and for a password-protected document, by the controls' names; the files
 * the service made are read back with poppler and qpdf.
 */
describe('output options in the generate form', () => {
  let app: TestApp;
  let browser: Browser;
  let user: SignedUpUser;
  let templateId: string;
  let key: string;
  let folder: string;

  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser());
    user = await signUp(app, { verified: true });
    const example = await app.request('POST', '/api/templates/examples/invoice', { token: user.accessToken });
    expect(example.status).toBe(201);
    templateId = example.body.templateId;
    const published = await app.request('POST', `/api/templates/${templateId}/publish`, { token: user.accessToken, body: {} });
    expect([200, 201]).toContain(published.status);
    key = (await createKey(app, user.accessToken, { name: 'reader', permissions: { read_documents: true } })).plainKey;
    folder = await mkdtemp(join(tmpdir(), 'generate-output-'));
  });
  afterAll(() => closeAppWithBrowser(app, browser));

  /** The newest job of the template once it has ended, and its file on disk. */
  async function newestFile(after: Set<string>, name: string): Promise<{ job: Record<string, any>; path: string }> {
    const job = await waitFor(
      async () => {
        const jobs = await app.request('GET', `/api/documents/jobs?templateId=${templateId}&limit=10`, { token: key });
        const found = (jobs.body.jobs as Array<{ jobId: string; status: string }>).find((j) => !after.has(j.jobId));
        return found && ['completed', 'failed'].includes(found.status) ? found : undefined;
      },
      { what: `the ${name} document`, timeoutMs: 90_000 },
    );
    expect([job.status, (job as { errorMessage?: string }).errorMessage ?? null]).toEqual(['completed', null]);
    const detail = await app.request('GET', `/api/documents/jobs/${job.jobId}`, { token: key });
    const path = join(folder, `${name}.pdf`);
    await writeFile(path, Buffer.from(await (await fetch(detail.body.downloadUrl)).arrayBuffer()));
    return { job: detail.body, path };
  }

  const jobIds = async () => new Set(((await app.request('GET', `/api/documents/jobs?limit=100`, { token: key })).body.jobs as Array<{ jobId: string }>).map((j) => j.jobId));

  async function choose(page: Page, select: string, option: string): Promise<void> {
    await byRole(page, 'combobox', select).click();
    await byRole(page, 'option', option).click();
  }

  it('makes a PDF/A-3b invoice with its Factur-X XML, then a password-protected one, as the form asks', async () => {
    await withAppPage(browser, 'generate-output', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await page.goto(`${app.url}/templates/${templateId}`);
      await byRole(page, 'button', 'Output options').click();
      await choose(page, 'PDF/A', 'PDF/A-3b (may embed files)');
      // A password is not offered with PDF/A: the standard forbids encryption.
      expect(await byRole(page, 'checkbox', 'Protect with a password').map((el) => (el as HTMLInputElement).disabled).wait()).toBe(true);
      await byRole(page, 'checkbox', 'Embed a Factur-X invoice (EN 16931)').click();
      await page.waitForFunction(() => Array.from(document.querySelectorAll("button")).some((b) => b.textContent?.includes("Output options: PDF/A-3b, Factur-X")));
      await expectWellBehaved(tab, app.url, 'generate form, output options');
      await keepScreenshot(page, 'generate-output-options');
      let before = await jobIds();
      await byRole(page, 'button', 'Generate').click();
      await byRole(page, 'heading', 'Documents').wait();
      const archival = await newestFile(before, 'pdfa');
      expect(archival.job.output).toEqual({ pdfa: '3b', facturx: { profile: 'EN16931' } });
      const { stdout: meta } = await run('pdfinfo', ['-meta', archival.path]);
      expect(meta).toMatch(/pdfaid:part(>|=")3/);
      const { stdout: attached } = await run('pdfdetach', ['-list', archival.path]);
      expect(attached).toContain('factur-x.xml');

      await page.goto(`${app.url}/templates/${templateId}`);
      await byRole(page, 'button', 'Output options').click();
      await byRole(page, 'checkbox', 'Protect with a password').click();
      await byRole(page, 'textbox', 'Owner password').fill('owner-secret');
      await byRole(page, 'textbox', 'Password to open').fill('open-sesame');
      await byRole(page, 'checkbox', 'Allow copying').click();
      await keepScreenshot(page, 'generate-output-password');
      before = await jobIds();
      await byRole(page, 'button', 'Generate').click();
      await byRole(page, 'heading', 'Documents').wait();
      const locked = await newestFile(before, 'locked');
      expect(locked.job.output.encryption).toEqual({ permissions: { print: true, copy: true, modify: false }, ownerPassword: { set: true }, userPassword: { set: true } });
      const { stdout: encryption } = await run('qpdf', ['--password=open-sesame', '--show-encryption', locked.path]);
      expect(encryption).toMatch(/AESv3|AES-256|aes256|256/i);
      await expect(run('pdftotext', [locked.path, '-'])).rejects.toThrow();
      const { stdout: text } = await run('pdftotext', ['-upw', 'open-sesame', locked.path, '-']);
      expect(text.length).toBeGreaterThan(20);
    });
  });

  it('uploads a signing certificate on the Team page and signs a document with it from the form', async () => {
    const certs = await makeCertificates('p12-secret');
    const p12 = join(folder, 'signer.p12');
    await writeFile(p12, certs.p12);
    try {
      await withAppPage(browser, 'generate-signed', async (tab) => {
        const { page } = tab;
        await signInThroughApp(page, app.url, user.email, user.password);
        await byRole(page, 'heading', 'Templates').wait();
        await page.goto(`${app.url}/team`);
        const [chooser] = await Promise.all([page.waitForFileChooser(), byRole(page, 'button', 'PKCS#12 file (.p12, .pfx)').click()]);
        await chooser.accept([p12]);
        await byRole(page, 'textbox', 'Its password').fill('p12-secret');
        await byRole(page, 'textbox', 'Certificate name').fill('Ada at Acme');
        await byRole(page, 'button', 'Upload certificate').click();
        const table = await byRole(page, 'table', 'Signing certificates of the project').waitHandle();
        await page.waitForFunction((el) => el.textContent?.includes('Ada at Acme') && el.textContent.includes('CN=Ada Signer'), {}, table);
        await expectWellBehaved(tab, app.url, 'team page, signing certificates');
        await keepScreenshot(page, 'team-signing-certificates');

        await page.goto(`${app.url}/templates/${templateId}`);
        await byRole(page, 'button', 'Output options').click();
        await byRole(page, 'combobox', 'Sign with').click();
        await page.locator('aria/Ada at Acme[role="option"]').setEnsureElementIsInTheViewport(false).click().catch(async () => {
          // The option's accessible name carries the validity too: pick it by its start.
          await page.waitForFunction(() => Array.from(document.querySelectorAll('[role="option"]')).some((o) => o.textContent?.startsWith('Ada at Acme')));
          await page.evaluate(() => (Array.from(document.querySelectorAll('[role="option"]')).find((o) => o.textContent?.startsWith('Ada at Acme')) as HTMLElement).click());
        });
        await byRole(page, 'checkbox', 'Show the signature on the last page').click();
        const before = await jobIds();
        await byRole(page, 'button', 'Generate').click();
        await byRole(page, 'heading', 'Documents').wait();
        const signed = await newestFile(before, 'signed');
        const { stdout } = await run('pdfsig', [signed.path]);
        expect(stdout).toContain('Signature is Valid');
        expect(stdout).toContain('ETSI.CAdES.detached');
        expect((await run('pdftotext', [signed.path, '-'])).stdout).toContain('Ada Signer');
      });
    } finally {
      await certs.cleanup();
    }
  });
});
