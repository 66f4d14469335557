import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HtmlDocument } from '../domain/templates/build-html';

/**
 * The peer of bench:render: jsreport (`@jsreport/jsreport-core` with `@jsreport/jsreport-chrome-pdf`,
 * dev dependencies of the benchmark only) printing the same HTML with the same print options on
 * the same Chromium. jsreport renders in worker threads, one request per thread at a time, and
 * its `chrome-pool` strategy keeps browsers per thread and opens a new page for each request
 * (loading the HTML from a temporary file). So `concurrency` threads with one browser each is
 * jsreport's own way of printing `concurrency` documents at once.
 */

export interface PeerRenderer {
  /** "jsreport-core 4.7.1, chrome-pdf 4.3.0": what ran. */
  label: string;
  renderPdf(doc: HtmlDocument, pageRanges: string, tagged: boolean): Promise<Buffer>;
  close(): Promise<void>;
}

interface JsreportResponse {
  output: { getBuffer(): Promise<Buffer> };
}
interface Jsreport {
  use(extension: unknown): Jsreport;
  init(): Promise<unknown>;
  render(req: unknown): Promise<JsreportResponse>;
  close(): Promise<void>;
}

export async function startJsreport(executablePath: string, concurrency: number): Promise<PeerRenderer> {
  const createJsreport = require('@jsreport/jsreport-core') as (options: unknown) => Jsreport;
  const chromePdf = require('@jsreport/jsreport-chrome-pdf') as (options?: unknown) => unknown;
  const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
  const tempDirectory = await mkdtemp(join(tmpdir(), 'formwork-bench-jsreport-'));
  const reporter = createJsreport({
    discover: false,
    tempDirectory,
    logger: { silent: true },
    // The templating engine is 'none' (the HTML is final): no user code to sandbox.
    trustUserCode: true,
    reportTimeout: 60_000,
    store: { provider: 'memory' },
    workers: { numberOfWorkers: concurrency },
    chrome: {
      strategy: 'chrome-pool',
      numberOfWorkers: 1,
      launchOptions: { executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] },
    },
  }).use(chromePdf());
  await reporter.init();
  return {
    label: `jsreport-core ${version('@jsreport/jsreport-core')} + jsreport-chrome-pdf ${version('@jsreport/jsreport-chrome-pdf')}, chrome-pool, ${concurrency} worker threads with a browser each`,
    async renderPdf(doc, pageRanges, tagged) {
      const res = await reporter.render({
        template: {
          content: doc.html,
          engine: 'none',
          recipe: 'chrome-pdf',
          chrome: {
            format: doc.pageSize,
            landscape: doc.landscape,
            marginTop: doc.margins.top,
            marginRight: doc.margins.right,
            marginBottom: doc.margins.bottom,
            marginLeft: doc.margins.left,
            printBackground: true,
            displayHeaderFooter: doc.displayHeaderFooter,
            headerTemplate: doc.displayHeaderFooter ? doc.headerTemplate : undefined,
            footerTemplate: doc.displayHeaderFooter ? doc.footerTemplate : undefined,
            pageRanges,
            tagged,
          },
        },
      });
      return res.output.getBuffer();
    },
    async close() {
      await reporter.close();
      await rm(tempDirectory, { recursive: true, force: true });
    },
  };
}
