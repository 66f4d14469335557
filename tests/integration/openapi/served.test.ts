import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import puppeteer, { type Browser } from 'puppeteer';
import { allOperations } from '../../../api/openapi/operations';
import { startTestApp, type TestApp } from '../../support/app';

/**
 * What a client sees: the document at /api/openapi.json without a credential, error answers that
 * match the document's error body, and the reference page at /api/docs rendering the operations in
 * headless Chromium with every request it makes going to this server only.
 */
let t: TestApp;
let browser: Browser | undefined;
beforeAll(async () => {
  t = await startTestApp({ worker: false, smtp: false });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

type Doc = { openapi: string; servers: Array<{ url: string }>; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, Record<string, unknown>> } };

test('GET /api/openapi.json answers the document without a credential', async () => {
  const res = await t.request<Doc>('GET', '/api/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.openapi).toBe('3.1.0');
  expect(res.body.servers).toEqual([{ url: t.url }]);
  const count = Object.values(res.body.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
  expect(count).toBe(allOperations({ batchMaxDocuments: t.services.config.documents.batchMaxDocuments }).length);
  expect(res.body.paths['/api/flow/gates/{gateId}/runs']).toHaveProperty('post');
});

test('real error answers match the document\'s error body', async () => {
  const doc = (await t.request<Doc>('GET', '/api/openapi.json')).body;
  const validate = addFormats(new Ajv2020({ strict: false })).compile(doc.components.schemas.Error);
  const answers = [
    await t.request('GET', '/api/api-keys'),
    await t.request('POST', '/api/auth/login', { body: { email: 'not-an-email' } }),
    await t.request('GET', '/api/no-such-route'),
  ];
  expect(answers.map((a) => a.status)).toEqual([401, 400, 404]);
  for (const a of answers) expect({ body: a.body, valid: validate(a.body), errors: validate.errors ?? null }).toEqual({ body: a.body, valid: true, errors: null });
});

test('GET /api/docs renders the operations from local files only', async () => {
  const page0 = await t.request('GET', '/api/docs');
  expect(page0.status).toBe(200);
  const csp = page0.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("connect-src 'self'");
  expect(csp).not.toMatch(/https?:|\*/);

  browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1600 });
  const requested: string[] = [];
  const cspViolations: string[] = [];
  page.on('request', (req) => requested.push(req.url()));
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  await page.goto(`${t.url}/api/docs`, { waitUntil: 'networkidle0' });
  // Swagger UI lists each operation with its summary once it has read /api/openapi.json. It renders
  // only the operations in view (a virtual list), so the page is scrolled down half a screen at a
  // time, as a reader would, noting the summaries shown once each step has rendered.
  await page.waitForSelector('.opblock-summary-description', { timeout: 60_000 });
  const wanted = ['Create an API key', 'Submit a run', "Upload a task's result"];
  const seen = new Set<string>();
  for (let step = 0; step < 500 && !wanted.every((s) => seen.has(s)); step++) {
    const { summaries, atEnd } = await page.evaluate(async () => {
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 20))));
      const shown = Array.from(document.querySelectorAll('.opblock-summary-description'), (el) => el.textContent ?? '');
      const end = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
      window.scrollBy(0, window.innerHeight / 2);
      return { summaries: shown, atEnd: end };
    });
    for (const s of summaries) seen.add(s);
    if (atEnd) break;
  }
  expect(wanted.filter((s) => !seen.has(s))).toEqual([]);
  expect(seen.size).toBeGreaterThan(150);
  const text = await page.evaluate(() => document.body.innerText);
  expect(text).toContain('Formwork API');
  expect(text).toContain('OAS 3.1');

  expect(requested).toContain(`${t.url}/api/openapi.json`);
  const elsewhere = requested.filter((url) => !url.startsWith('data:') && new URL(url).host !== new URL(t.url).host);
  expect(elsewhere).toEqual([]);
  expect(requested.every((url) => url.startsWith('data:') || new URL(url).hostname === '127.0.0.1')).toBe(true);
  expect(cspViolations).toEqual([]);
});
