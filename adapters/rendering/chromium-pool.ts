import type { Page } from 'puppeteer';
import { AppError } from '../../domain/errors';
import type { HtmlDocument } from '../../domain/templates/build-html';
import {
  DEFAULT_PRINT_TIMEOUTS,
  disposeBrowser,
  launchBrowser,
  type LaunchedBrowser,
  preparePage,
  printPdf,
  type PrintTimeouts,
} from './chromium-page';
import type { PageAssets, PdfRenderer, PdfRenderOptions, PdfRenderResult } from './pdf-renderer';
import { Semaphore } from './semaphore';

/**
 * One long-lived Chromium per process with a warm set of pages (gotenberg's and jsreport's
 * approach): launching a browser costs far more than printing a page. The browser is replaced
 * after `maxDocumentsPerBrowser` documents, to bound leaks, and whenever it disconnects or dies.
 */

export interface ChromiumPoolOptions {
  executablePath?: string;
  /** Pages printing at once; further renders wait their turn. */
  poolSize: number;
  maxDocumentsPerBrowser: number;
  imageAllowlist: readonly string[];
  timeouts?: PrintTimeouts;
}

/** One browser generation: its pages and how much it has done. */
interface Instance extends LaunchedBrowser {
  generation: number;
  documents: number;
  active: number;
  retired: boolean;
  disposed?: Promise<void>;
  idle: Page[];
}

/** Thrown inside a render when the browser under it went away, so the render is tried once more. */
class BrowserGone extends Error {}

/**
 * Chromium's `Page.printToPDF` now and then answers "Printing failed" for a page that printed fine
 * a moment later (seen on a loaded machine with a page whose frames and media were all blocked).
 * The page is discarded after it; the document gets one more try on a fresh page.
 */
const isTransientPrintFailure = (err: unknown) => err instanceof Error && err.name === 'ProtocolError' && /Printing failed/.test(err.message);

export class ChromiumPool implements PdfRenderer {
  private readonly semaphore: Semaphore;
  private readonly instances = new Set<Instance>();
  private current?: Instance;
  private launching?: Promise<Instance>;
  private generation = 0;
  private rendered = 0;
  private closed = false;

  constructor(private readonly options: ChromiumPoolOptions) {
    this.semaphore = new Semaphore(options.poolSize);
  }

  /** How many browsers have been launched: grows on each recycle or crash recovery. */
  get browserGeneration(): number {
    return this.generation;
  }

  /** The live browser's process id, if one is running (for diagnostics and crash tests). */
  get browserPid(): number | undefined {
    return this.current?.browser.process()?.pid;
  }

  /** Documents printed, renders in progress and warm pages of the live browser. */
  get stats(): { documents: number; active: number; idlePages: number } {
    return { documents: this.rendered, active: this.semaphore.size - this.semaphore.free, idlePages: this.current?.idle.length ?? 0 };
  }

  /** Launches the browser and opens the pages now, so the first document is not the slow one. */
  async start(): Promise<void> {
    const inst = await this.instance();
    while (inst.idle.length < this.options.poolSize) inst.idle.push(await this.newPage(inst));
  }

  async renderPdf(doc: HtmlDocument, { maxPages, signal, assets }: PdfRenderOptions): Promise<PdfRenderResult> {
    return this.semaphore.with(async () => {
      try {
        return await this.renderOnce(doc, maxPages, signal, assets);
      } catch (err) {
        if (!(err instanceof BrowserGone) && !isTransientPrintFailure(err)) throw err;
        // The browser died under this document (crash, OOM kill), or Chromium failed to print a
        // page it could print: one more try on a fresh browser or page.
        try {
          return await this.renderOnce(doc, maxPages, signal, assets);
        } catch (again) {
          throw again instanceof BrowserGone ? (again.cause as Error) : again;
        }
      }
    }, signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.launching?.catch(() => undefined);
    await Promise.all([...this.instances].map((inst) => this.dispose(inst)));
    this.current = undefined;
  }

  private async renderOnce(doc: HtmlDocument, maxPages: number, signal?: AbortSignal, assets?: PageAssets): Promise<PdfRenderResult> {
    signal?.throwIfAborted();
    const inst = await this.instance();
    inst.active += 1;
    let page: Page | undefined;
    let reusable = false;
    // A cancelled render closes its page: Chromium stops laying out and printing at once (a huge
    // table takes minutes), the pending CDP calls reject, and the next render gets a fresh page.
    const stop = () => void page?.close().catch(() => undefined);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      page = inst.idle.pop() ?? (await this.newPage(inst));
      signal?.throwIfAborted();
      const result = await printPdf(page, doc, maxPages, this.options.timeouts ?? DEFAULT_PRINT_TIMEOUTS, assets);
      signal?.throwIfAborted();
      reusable = true;
      this.rendered += 1;
      return result;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      // A limit error leaves the page healthy; anything else may have left it mid-navigation.
      reusable = err instanceof AppError;
      // A catalogued error (a limit) keeps its code even when the browser went away meanwhile: the
      // render would fail with it again, and the job must say why, not ERR_RENDER_001.
      if (!reusable && !inst.browser.connected) throw new BrowserGone('browser disconnected', { cause: err });
      throw err;
    } finally {
      signal?.removeEventListener('abort', stop);
      inst.active -= 1;
      inst.documents += 1;
      await this.releasePage(inst, page, reusable);
      if (inst.documents >= this.options.maxDocumentsPerBrowser) this.retire(inst);
      if (inst.retired && inst.active === 0) await this.dispose(inst);
    }
  }

  private async releasePage(inst: Instance, page: Page | undefined, reusable: boolean): Promise<void> {
    if (!page) return;
    // No blank page in between: the next document's setContent replaces the whole document
    // (document.open), so nothing of this one reaches the next, and the per-document reset cost
    // a second load of a page.
    if (reusable && !inst.retired && inst.browser.connected && !page.isClosed()) {
      inst.idle.push(page);
      return;
    }
    await page.close().catch(() => undefined);
  }

  private async newPage(inst: Instance): Promise<Page> {
    const page = await inst.browser.newPage();
    await preparePage(page, this.options.imageAllowlist);
    return page;
  }

  private async instance(): Promise<Instance> {
    if (this.closed) throw new Error('ChromiumPool is closed');
    if (this.current && !this.current.retired && this.current.browser.connected) return this.current;
    if (this.current) this.retire(this.current);
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<Instance> {
    const launched = await launchBrowser(this.options.executablePath, this.options.imageAllowlist);
    this.generation += 1;
    const inst: Instance = { ...launched, generation: this.generation, documents: 0, active: 0, retired: false, idle: [] };
    this.instances.add(inst);
    launched.browser.once('disconnected', () => {
      this.retire(inst);
      if (inst.active === 0) void this.dispose(inst);
    });
    this.current = inst;
    return inst;
  }

  /** Stops new work going to an instance; it is disposed when its last render ends. */
  private retire(inst: Instance): void {
    inst.retired = true;
    if (this.current === inst) this.current = undefined;
  }

  private dispose(inst: Instance): Promise<void> {
    inst.retired = true;
    inst.disposed ??= (async () => {
      inst.idle.length = 0;
      await disposeBrowser(inst);
      this.instances.delete(inst);
    })();
    return inst.disposed;
  }
}

export interface RenderingConfig {
  poolSize: number;
  browserMaxDocuments: number;
  imageHostAllowlist: string[];
}

/** The pool as the worker and API build it from `config.rendering` and `config.browser`. */
export function createChromiumPool(rendering: RenderingConfig, executablePath?: string): ChromiumPool {
  return new ChromiumPool({
    executablePath,
    poolSize: rendering.poolSize,
    maxDocumentsPerBrowser: rendering.browserMaxDocuments,
    imageAllowlist: rendering.imageHostAllowlist,
  });
}
