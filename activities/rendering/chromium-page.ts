import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer';
import { AppError } from '../../domain/errors';
import type { HtmlDocument } from '../../domain/templates/build-html';
import { isAllowedRemoteUrl } from '../../domain/templates/image-hosts';
import type { PdfRenderResult } from './pdf-renderer';

/**
 * The pieces of printing one document in Chromium, shared by the pool and the bench's
 * launch-per-document baseline.
 */

const SYSTEM_BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'];

/**
 * The browser to launch (contract §1): the configured path, else one installed on the machine,
 * else undefined, which lets puppeteer use its own download.
 */
function findChromium(explicit?: string): string | undefined {
  if (explicit) return explicit;
  return SYSTEM_BROWSERS.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--mute-audio',
  '--hide-scrollbars',
  '--font-render-hinting=none',
];

export interface LaunchedBrowser {
  browser: Browser;
  userDataDir: string;
}

/**
 * The network wall under the page-level interception: every request goes to a proxy that does
 * not exist (so it fails), except for allow-listed image hosts. It also catches what the browser
 * fetches outside a page's request events, such as `<link rel=prefetch>`. `<-loopback>` removes
 * Chromium's built-in proxy bypass for localhost.
 */
function networkArgs(imageAllowlist: readonly string[]): string[] {
  const bypass = ['<-loopback>', ...imageAllowlist.filter((h) => /^[\w.*:[\]-]+$/.test(h))];
  return ['--proxy-server=http://127.0.0.1:9', `--proxy-bypass-list=${bypass.join(';')}`];
}

/** A headless Chromium with a fresh, throw-away profile. */
export async function launchBrowser(executablePath?: string, imageAllowlist: readonly string[] = []): Promise<LaunchedBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'formwork-chromium-'));
  try {
    const browser = await puppeteer.launch({
      executablePath: findChromium(executablePath),
      headless: true,
      args: [...CHROMIUM_ARGS, ...networkArgs(imageAllowlist)],
      userDataDir,
      pipe: true,
      // The process owner decides about signals; a worker shuts the pool down itself.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 30_000,
    });
    return { browser, userDataDir };
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
}

/** Closes the browser (killing it if it does not answer) and removes its profile. */
export async function disposeBrowser({ browser, userDataDir }: LaunchedBrowser): Promise<void> {
  const proc = browser.process();
  try {
    await Promise.race([
      browser.close(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('close timed out')), 5000).unref()),
    ]);
  } catch {
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
  await rm(userDataDir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * What a page may load: `data:` URLs, and images from allow-listed hosts. Every other request
 * (scripts, styles, fonts, frames, fetches, images elsewhere, file: URLs) is aborted before it
 * leaves the browser; together with JavaScript off this keeps a template from reaching the network.
 */
function requestAllowed(url: string, resourceType: string, imageAllowlist: readonly string[]): boolean {
  if (url.startsWith('data:') || url === 'about:blank') return true;
  return resourceType === 'image' && isAllowedRemoteUrl(url, imageAllowlist);
}

export async function preparePage(page: Page, imageAllowlist: readonly string[]): Promise<void> {
  await page.setJavaScriptEnabled(false);
  await page.setRequestInterception(true);
  page.on('request', (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    const allowed = requestAllowed(req.url(), req.resourceType(), imageAllowlist);
    (allowed ? req.continue() : req.abort('blockedbyclient')).catch(() => undefined);
  });
}

/** Counts page objects (`/Type /Page`, not `/Pages`) in Chromium's uncompressed object table. */
export function countPdfPages(pdf: Buffer): number {
  return pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
}

export interface PrintTimeouts {
  contentMs: number;
  printMs: number;
}

export const DEFAULT_PRINT_TIMEOUTS: PrintTimeouts = { contentMs: 30_000, printMs: 60_000 };

/**
 * Prints a built document. Only the first maxPages + 1 pages are printed: enough to know the
 * limit is exceeded without spending time on a runaway document.
 */
export async function printPdf(
  page: Page,
  doc: HtmlDocument,
  maxPages: number,
  timeouts: PrintTimeouts = DEFAULT_PRINT_TIMEOUTS,
): Promise<PdfRenderResult> {
  await page.setContent(doc.html, { waitUntil: 'load', timeout: timeouts.contentMs });
  const pdf = Buffer.from(
    await page.pdf({
      format: doc.pageSize,
      landscape: doc.landscape,
      margin: doc.margins,
      printBackground: true,
      displayHeaderFooter: doc.displayHeaderFooter,
      headerTemplate: doc.headerTemplate,
      footerTemplate: doc.footerTemplate,
      pageRanges: `1-${maxPages + 1}`,
      timeout: timeouts.printMs,
    }),
  );
  const pageCount = countPdfPages(pdf);
  if (pageCount > maxPages) {
    throw new AppError('ERR_LIMIT_001', `Document exceeds the limit of ${maxPages} PDF pages`, { limit: maxPages });
  }
  return { pdf, pageCount };
}

/** Empties a page between documents so one document's content never lingers into the next. */
export async function resetPage(page: Page): Promise<void> {
  await page.setContent('<!DOCTYPE html><html><body></body></html>', { waitUntil: 'domcontentloaded', timeout: 5000 });
}
