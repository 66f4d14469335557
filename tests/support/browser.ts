import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer';
import { startTestApp, type TestApp, type TestAppOptions } from './app';
import { WAIT_SLACK } from './wait';

/**
 * The dashboard in a real browser (docs/web.md, "Accessibility and tests"): Debian's Chromium driven by Puppeteer.
 * Controls are found as a screen reader finds them, by role and accessible name (`aria/Name[role="…"]`),
 * never by CSS class. Every page records what it asked of which origin and what the Content-Security-
 * Policy refused, so a test can assert that the app talks to its own origin only and breaks no rule.
 */
export interface AppPage {
  page: Page;
  /** Every request's URL the page made (navigation, scripts, styles, API calls, images). */
  requests: string[];
  /** Console messages Chromium wrote about CSP refusals. */
  violations: string[];
  /** Every console message and page error, kept with a failing test's screenshot. */
  console: string[];
  /** The API's answers of 400 and above (`status METHOD path`), named in a failing test's error. */
  refusals: string[];
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export interface PageOptions {
  /** Where the page's downloads are saved (else the browser refuses them). */
  downloadPath?: string;
}

export async function openAppPage(browser: Browser, options: PageOptions = {}): Promise<AppPage> {
  // A context of its own: cookies (the refresh cookie) are not shared with another test's page.
  const context = await browser.createBrowserContext(options.downloadPath ? { downloadBehavior: { policy: 'allow', downloadPath: options.downloadPath } } : {});
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  // Any one step a person waits for takes well under 30 s on a machine running only this suite. The
  // first template check of a fresh app loads the checks' code in an evaluation worker at nice 10
  // (adapters/evaluation/eval-pool.ts), which took 38 s with six busy processes beside it: a loaded
  // CI run waited more than the 60 s this was before.
  page.setDefaultTimeout(30_000 * WAIT_SLACK);
  // Dialogs appear without their fade (the app honours reduced motion): screenshots show them whole.
  await page.emulateMediaFeatures([{ name: 'prefers-reduced-motion', value: 'reduce' }]);
  const requests: string[] = [];
  const violations: string[] = [];
  const console: string[] = [];
  const refusals: string[] = [];
  page.on('request', (request) => {
    requests.push(request.url());
  });
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (response.status() >= 400 && url.pathname.startsWith('/api/')) refusals.push(`${response.status()} ${response.request().method()} ${url.pathname}`);
  });
  page.on('console', (message) => {
    console.push(`${message.type()}: ${message.text()}`);
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => {
    console.push(`pageerror: ${error instanceof Error ? error.message : String(error)}`);
  });
  return { page, requests, violations, console, refusals };
}

/** An element by role and accessible name, waited for. */
export function byRole(page: Page, role: string, name: string) {
  return page.locator(`aria/${name}[role="${role}"]`);
}

/**
 * Closes the open dialog with its "Close" button and waits until no dialog is left: a click while its
 * overlay still covers the page lands on the overlay and does nothing (seen in a loaded CI run).
 */
export async function closeDialog(page: Page): Promise<void> {
  await byRole(page, 'button', 'Close').click();
  await page.waitForFunction(() => !document.querySelector('[role="dialog"]'));
}

/** Edits a text box as a person does: selects the first `from` in it and types `to` over it. */
export async function typeOver(page: Page, name: string, from: string, to: string): Promise<void> {
  const box = await byRole(page, 'textbox', name).waitHandle();
  const found = await box.evaluate((el, text) => {
    const area = el as HTMLTextAreaElement | HTMLInputElement;
    const at = area.value.indexOf(text);
    if (at < 0) return false;
    area.focus();
    area.setSelectionRange(at, at + text.length);
    return true;
  }, from);
  if (!found) throw new Error(`"${from}" is not in the text box "${name}"`);
  await page.keyboard.type(to);
}

/** Waits until the page's text (as a screen reader reads it: before CSS capitals) contains `text`. */
export async function waitForText(page: Page, text: string): Promise<void> {
  await page.waitForFunction((t) => document.body.textContent?.includes(t), {}, text);
}

/** The text of the region (a landmark or labelled section) named `name`. */
export function regionText(page: Page, name: string): Promise<string> {
  return page.$eval(`aria/${name}[role="region"]`, (region) => region.textContent ?? '');
}

/** Waits until the region named `name` holds `text` (a preview's text layer, a list that updates). */
export async function waitForRegionText(page: Page, name: string, text: string): Promise<void> {
  const region = await byRole(page, 'region', name).waitHandle();
  await page.waitForFunction((el, t) => el.textContent?.includes(t), {}, region, text);
}

/**
 * What the page showed when a test failed, for the error's message (a CI log has no screenshot): its
 * address, its alerts and open dialog, the API's refusals it met.
 */
async function pageContext({ page, refusals }: AppPage): Promise<string> {
  const shown = await page
    .evaluate(() => {
      const text = (el: Element) => ((el as HTMLElement).innerText ?? '').replace(/\s+/g, ' ').trim().slice(0, 300);
      return {
        alerts: Array.from(document.querySelectorAll('[role="alert"]')).map(text).filter(Boolean),
        dialog: Array.from(document.querySelectorAll('[role="dialog"]')).map(text).join(' | '),
      };
    })
    .catch(() => ({ alerts: [] as string[], dialog: '' }));
  return [
    '',
    `  page: ${page.url()}`,
    `  alerts: ${shown.alerts.length ? shown.alerts.join(' | ') : '(none)'}`,
    shown.dialog ? `  dialog: ${shown.dialog}` : '',
    `  API refusals: ${refusals.length ? refusals.slice(-8).join(', ') : '(none)'}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Runs `body` with a fresh page; when it throws, a screenshot of the page and its console are kept
 * under the run's output folder ($FORMWORK_TEST_OUTPUT/screenshots/<name>.png, .console.txt) before
 * the error goes on.
 */
export async function withAppPage(browser: Browser, name: string, body: (app: AppPage) => Promise<void>, options: PageOptions = {}): Promise<void> {
  const app = await openAppPage(browser, options);
  try {
    await body(app);
  } catch (err) {
    const dir = join(process.env.FORMWORK_TEST_OUTPUT ?? 'test-output', 'screenshots');
    await mkdir(dir, { recursive: true });
    const file = join(dir, name.replace(/[^a-z0-9-]+/gi, '-'));
    await app.page.screenshot({ path: `${file}.png`, fullPage: true }).catch(() => undefined);
    await writeFile(`${file}.console.txt`, app.console.join('\n'));
    if (err instanceof Error) {
      // Jest prints the stack (which carries the message as it was when the error was made): the context goes there.
      const context = await pageContext(app);
      if (err.stack?.includes(err.message)) err.stack = err.stack.replace(err.message, err.message + context);
      else err.message += context;
    }
    throw err;
  } finally {
    await app.page.browserContext().close();
  }
}

/** A picture of the page as it is, kept under the run's output folder ($FORMWORK_TEST_OUTPUT/pages/<name>.png) to be looked at. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  const dir = join(process.env.FORMWORK_TEST_OUTPUT ?? 'test-output', 'pages');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) as `${string}.png` });
}

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown }> }>;
}

let axeSource: string | undefined;

/**
 * axe-core's findings on the page as it is now, those of impact `critical`. The library is
 * evaluated through the DevTools protocol, which the page's CSP does not govern; the page itself
 * is not changed.
 */
export async function criticalAxeViolations(page: Page): Promise<Array<{ id: string; help: string; targets: string }>> {
  axeSource ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const result = (await page.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as AxeResult;
  return result.violations.filter((v) => v.impact === 'critical').map((v) => ({ id: v.id, help: v.help, targets: JSON.stringify(v.nodes.map((n) => n.target)) }));
}

/** What every page must keep to: only the app's origin asked, no CSP refusal, no critical axe finding. */
export async function expectWellBehaved({ page, requests, violations }: AppPage, appUrl: string, where: string): Promise<void> {
  const origin = new URL(appUrl).origin;
  expect({ where, elsewhere: requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) }).toEqual({ where, elsewhere: [] });
  expect({ where, violations }).toEqual({ where, violations: [] });
  expect({ where, critical: await criticalAxeViolations(page) }).toEqual({ where, critical: [] });
}

/** Signs in through the app's sign-in page. */
export async function signInThroughApp(page: Page, appUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${appUrl}/sign-in`);
  await byRole(page, 'textbox', 'Email').fill(email);
  await page.locator('aria/Password').fill(password);
  await byRole(page, 'button', 'Sign in').click();
}

/** The service and Debian's Chromium for a browser test file's `beforeAll`. */
export async function startAppWithBrowser(options?: TestAppOptions): Promise<{ app: TestApp; browser: Browser }> {
  const app = await startTestApp(options);
  return { app, browser: await launchBrowser() };
}

/** Their `afterAll`: what was started is closed, even when starting failed half-way. */
export async function closeAppWithBrowser(app: TestApp | undefined, browser: Browser | undefined): Promise<void> {
  await browser?.close();
  await app?.close();
}
