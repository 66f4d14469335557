import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, CDPSession, HTTPRequest, Page } from 'puppeteer';
import { AppError } from '../../domain/errors';
import type { HtmlDocument } from '../../domain/templates/build-html';
import { isAllowedRemoteUrl } from '../../domain/templates/image-hosts';
import { ASSET_ORIGIN } from '../../domain/templates/components/asset-ref';
import type { PageSize } from '../../domain/templates/template.types';
import { destinationPages, replaceFirstPage } from './pdf-edit';
import type { PageAssets, PdfRenderResult } from './pdf-renderer';

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
    // Loaded at the first launch: a process that never renders (an API without previews) does not load it.
    const { default: puppeteer } = await import('puppeteer');
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

/** Each prepared page's own DevTools session: printToPDF is sent on it directly (see printPdf). */
const printSessions = new WeakMap<Page, CDPSession>();

/** The assets of the document a page is printing now (set by printPdf for that document only). */
const pageAssets = new WeakMap<Page, PageAssets>();
const ASSET_PREFIX = `${ASSET_ORIGIN}/`;

/**
 * Requests of a page: an asset URL is answered from the bytes loaded for the document being printed
 * (never from the network, and only this document's: request interception keeps Chromium's cache
 * off, so nothing one document loaded serves another); everything else as requestAllowed says.
 */
export async function preparePage(page: Page, imageAllowlist: readonly string[]): Promise<void> {
  await page.setJavaScriptEnabled(false);
  await page.setRequestInterception(true);
  page.on('request', (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    const url = req.url();
    if (url.startsWith(ASSET_PREFIX)) {
      const asset = pageAssets.get(page)?.get(url.slice(ASSET_PREFIX.length));
      // Fonts are fetched in CORS mode from the page's opaque origin: the answer must allow any origin.
      const answer = asset && req.respond({ status: 200, contentType: asset.contentType, headers: { 'Access-Control-Allow-Origin': '*' }, body: asset.body });
      (answer || req.abort('blockedbyclient')).catch(() => undefined);
      return;
    }
    const allowed = requestAllowed(url, req.resourceType(), imageAllowlist);
    (allowed ? req.continue() : req.abort('blockedbyclient')).catch(() => undefined);
  });
  printSessions.set(page, await page.createCDPSession());
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
 * Tagged PDF (the structure tree screen readers use): puppeteer's default, kept. Turning it off
 * saved nothing measurable next to the noise of a loaded machine (docs/performance.md, "Rendering").
 */
export const TAGGED_PDF = true;

/** Paper sizes in inches, as Chromium's printToPDF takes them (puppeteer's own table). */
const PAPER_INCHES: Record<PageSize, { width: number; height: number }> = {
  A3: { width: 11.6929, height: 16.5354 },
  A4: { width: 8.2677, height: 11.6929 },
  A5: { width: 5.8268, height: 8.2677 },
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
};

const INCHES_PER_UNIT: Record<string, number> = { in: 1, cm: 1 / 2.54, mm: 1 / 25.4, pt: 1 / 72, px: 1 / 96 };

/** A margin (a CSS length, e.g. `20mm`; a bare number is pixels, as in puppeteer) in inches. */
function inches(length: string): number {
  const m = /^(-?\d+(?:\.\d+)?)(in|cm|mm|pt|px)?$/.exec(length.trim());
  if (!m) throw new Error(`Unsupported page margin '${length}'`);
  return Number(m[1]) * INCHES_PER_UNIT[m[2] ?? 'px'];
}

async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} took longer than ${ms} ms`), { name: 'TimeoutError' })), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Prints a built document. Only the first maxPages + 1 pages are printed: enough to know the
 * limit is exceeded without spending time on a runaway document.
 *
 * The page's own DevTools session asks Chromium for the PDF in one message (base64), where
 * puppeteer's page.pdf() reads it back through a stream: two or three more round trips per
 * document. The wait for `document.fonts.ready` stays (as page.pdf() does it): it has no web
 * font to wait for (the page's CSP and the request interception let none load), but it lets a
 * navigation the page started itself (`<meta http-equiv=refresh>` in raw HTML) settle first;
 * printing while one is pending fails with "Printing failed".
 */
export async function printPdf(
  page: Page,
  doc: HtmlDocument,
  maxPages: number,
  timeouts: PrintTimeouts = DEFAULT_PRINT_TIMEOUTS,
  assets?: PageAssets,
): Promise<PdfRenderResult> {
  if (assets?.size) pageAssets.set(page, assets);
  try {
    return await printDocument(page, doc, maxPages, timeouts);
  } finally {
    pageAssets.delete(page);
  }
}

async function printDocument(page: Page, doc: HtmlDocument, maxPages: number, timeouts: PrintTimeouts): Promise<PdfRenderResult> {
  await page.setContent(doc.html, { waitUntil: 'load', timeout: timeouts.contentMs });
  await withTimeout(page.evaluate(() => document.fonts.ready.then(() => undefined)), timeouts.contentMs, 'Loading fonts');
  const paper = PAPER_INCHES[doc.pageSize];
  const session = printSessions.get(page) ?? (await page.createCDPSession());
  printSessions.set(page, session);
  const print = async (templates: { headerTemplate: string; footerTemplate: string }, pageRanges: string) => {
    const { data } = await withTimeout(
      session.send('Page.printToPDF', {
        transferMode: 'ReturnAsBase64',
        landscape: doc.landscape,
        displayHeaderFooter: doc.displayHeaderFooter,
        headerTemplate: templates.headerTemplate,
        footerTemplate: templates.footerTemplate,
        printBackground: true,
        paperWidth: paper.width,
        paperHeight: paper.height,
        marginTop: inches(doc.margins.top),
        marginBottom: inches(doc.margins.bottom),
        marginLeft: inches(doc.margins.left),
        marginRight: inches(doc.margins.right),
        pageRanges,
        generateTaggedPDF: TAGGED_PDF,
        generateDocumentOutline: false,
      }),
      timeouts.printMs,
      'Printing the PDF',
    );
    return Buffer.from(data, 'base64');
  };
  let pdf: Buffer = await print(doc, `1-${maxPages + 1}`);
  const pageCount = countPdfPages(pdf);
  if (pageCount > maxPages) {
    throw new AppError('ERR_LIMIT_001', `Document exceeds the limit of ${maxPages} PDF pages`, { limit: maxPages });
  }
  // A table of contents: its page numbers are where the first print put each heading's anchor.
  if (doc.toc) {
    const numbers = await destinationPages(pdf);
    await withTimeout(
      page.evaluate((pages: Record<string, number>) => {
        document.querySelectorAll('[data-fw-toc]').forEach((slot) => {
          const id = slot.getAttribute('data-fw-toc') ?? '';
          slot.textContent = Object.prototype.hasOwnProperty.call(pages, id) ? String(pages[id]) : '';
        });
      }, numbers),
      timeouts.contentMs,
      'Numbering the table of contents',
    );
    pdf = await print(doc, `1-${maxPages + 1}`);
  }
  // A first-page header or footer: page 1 printed again with them ({pages} still counts the whole document).
  if (doc.firstPage) pdf = await replaceFirstPage(pdf, await print(doc.firstPage, '1'));
  return { pdf, pageCount };
}
