import type { WorkbookGrid } from '../../domain/documents/previews';
import { AppError } from '../../domain/errors';
import { limitsOf } from '../../domain/templates/build-html';
import type { RenderLimits, ResolvedData, TemplateDefinition, TemplateSchema } from '../../domain/templates/template.types';
import type { Evaluator } from '../../domain/evaluation';
import { resolveVariables } from '../../domain/templates/variables';
import { hasConditions } from '../../domain/templates/visibility';
import type { RowSource } from './excel-renderer';
import { sharedExcelThreads, type ExcelRenderer } from './excel-threads';
import type { PdfRenderer } from './pdf-renderer';
import type { PdfTools, SigningMaterial } from './pdf-tools/pdf-tools';
import type { ImageRequest } from './pdf-tools/images';
import { needsFinishing, type OutputOptions } from '../../domain/documents/output';
import type { DocumentFormat } from '../../domain/documents/types';
import { NO_LOADED_ASSETS, type AssetLoader } from './render-assets';

/**
 * One entry point for turning a template and generation input into a file, used by the
 * generation activities and by the preview endpoint. Errors are AppErrors: ERR_VALID_002/005 for
 * bad input, ERR_LIMIT_001/003/007/008/009/011 for limits, ERR_TMPL_008 for a template that cannot render.
 * Nothing heavy runs on the caller's event loop: calculated variables evaluate in the evaluation
 * processes, workbooks are built on Excel threads, PDFs are printed by Chromium.
 */

export interface RenderDeps {
  pdfRenderer: PdfRenderer;
  /** Evaluates calculated variables off this thread, within the budget (domain/evaluation.ts). */
  evaluator: Evaluator;
  /** Builds workbooks off this thread; default a process-wide single thread (sharedExcelThreads). */
  excelRenderer?: ExcelRenderer;
  /** Page, row, loop and HTML-size limits; unset ones take DEFAULT_RENDER_LIMITS. */
  limits?: Partial<RenderLimits>;
  imageAllowlist?: readonly string[];
  /** Loads the project's assets the template names (render-assets.ts); without it, asset references show nothing. */
  assets?: AssetLoader;
  /** Finishes PDFs as `output` asks, in their own processes (pdf-tools/); needed only when something is asked. */
  pdfTools?: PdfTools;
  /** Opens a project's signing certificate for output.signature. */
  signing?: (projectId: string, certificateId: string) => Promise<SigningMaterial>;
  /** OUTBOUND_ALLOWLIST, for the timestamp authority a signature asks. */
  outboundAllowlist?: string[];
}

export interface RenderDocumentInput {
  /** The project the document is for: its share of the evaluation workers. */
  tenant: string;
  template: TemplateDefinition;
  variables?: Record<string, unknown>;
  format: DocumentFormat;
  /** What is done to the printed PDF (domain/documents/output.ts), checked when it was asked for. */
  output?: OutputOptions | null;
  /** Free-quota documents carry the FORMWORK FREE watermark. */
  watermark?: boolean;
  /** Document title metadata (e.g. the requested filename). */
  title?: string;
  /** Aborting it stops the render where it is (Chromium page closed, Excel thread ended). */
  signal?: AbortSignal;
}

export interface RenderedDocument {
  body: Buffer;
  contentType: string;
  fileExtension: 'pdf' | 'xlsx' | 'png' | 'zip';
  pageCount?: number;
}

export const CONTENT_TYPES = {
  pdf: 'application/pdf',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  png: 'image/png',
  zip: 'application/zip',
} as const;

export async function renderDocument(deps: RenderDeps, input: RenderDocumentInput): Promise<RenderedDocument> {
  const { limits, data, schema, excelOptions, assets } = await prepare(deps, input);
  const { signal } = input;
  if (input.format === 'excel') {
    const body = await (deps.excelRenderer ?? sharedExcelThreads()).renderExcel(schema, data, excelOptions, signal);
    return { body: withinOutputLimit(body, limits.maxOutputBytes), contentType: CONTENT_TYPES.xlsx, fileExtension: 'xlsx' };
  }
  // Built in the evaluation workers: tenant loops and text decide how much HTML this is.
  const { imageAllowlist, watermark, title, hidden } = excelOptions;
  const doc = await deps.evaluator.check(input.tenant, 'templateHtml', schema, data, { limits, imageAllowlist, watermark, title, hidden, assets: assets.document });
  signal?.throwIfAborted();
  const { pdf: printed, pageCount } = await deps.pdfRenderer.renderPdf(doc, { maxPages: limits.maxPdfPages, signal, assets: assets.bodies });
  const pdf = await finished(deps, input, printed, assets.appendPdfs, data);
  if (input.format === 'png') {
    // maxBytes: the PNGs stop at the output limit while they are made (pdf-tools/images.ts).
    const request: ImageRequest = { ...input.output?.image, maxBytes: limits.maxOutputBytes };
    const image = await tools(deps).toImages(withinOutputLimit(pdf, limits.maxOutputBytes), request, signal);
    return { body: withinOutputLimit(image.body, limits.maxOutputBytes), contentType: image.contentType, fileExtension: image.fileExtension, pageCount: image.pageCount };
  }
  return { body: withinOutputLimit(pdf, limits.maxOutputBytes), contentType: CONTENT_TYPES.pdf, fileExtension: 'pdf', pageCount };
}

const tools = (deps: RenderDeps): PdfTools => {
  if (!deps.pdfTools) throw new Error('This render has no PDF tools (RenderDeps.pdfTools)');
  return deps.pdfTools;
};

/** The printed PDF finished as `output` asks (the e-invoice reads the resolved variables, calculated ones included) (and with the template's appended PDFs); as printed when nothing is asked. */
async function finished(deps: RenderDeps, input: RenderDocumentInput, pdf: Buffer, appendPdfs: Buffer[] | undefined, variables: ResolvedData): Promise<Buffer> {
  const output = input.output ?? {};
  if (!needsFinishing(output) && !appendPdfs?.length) return pdf;
  const { signature } = output;
  if (signature && !deps.signing) throw new Error('This render cannot open signing certificates (RenderDeps.signing)');
  const signing = signature ? await deps.signing!(input.tenant, signature.certificateId) : undefined;
  input.signal?.throwIfAborted();
  return tools(deps).finish(
    pdf,
    { output, title: input.title, createdAt: new Date().toISOString(), variables, signing, outboundAllowlist: deps.outboundAllowlist, appendPdfs },
    input.signal,
  );
}

/**
 * The workbook a render would make, read back as a grid for a preview (workbook-grid.ts): built and
 * read on an Excel thread, under the same limits as the file (RENDER_OUTPUT_MAX_BYTES included).
 */
export async function renderWorkbookGrid(deps: RenderDeps, input: Omit<RenderDocumentInput, 'format'>): Promise<WorkbookGrid> {
  const { limits, data, schema, excelOptions } = await prepare(deps, input);
  const { body, grid } = await (deps.excelRenderer ?? sharedExcelThreads()).renderExcelGrid(schema, data, excelOptions, input.signal);
  withinOutputLimit(body, limits.maxOutputBytes);
  return grid;
}

/** What every render needs first: the variables resolved, the hidden instances, the assets. */
async function prepare(deps: RenderDeps, input: Omit<RenderDocumentInput, 'format'>) {
  const limits = limitsOf(deps.limits);
  const data = await resolveVariables(input.template, input.variables ?? {}, (calculated, scope) =>
    deps.evaluator.calculate({ tenant: input.tenant, calculated, scope }),
  );
  const { schema } = input.template;
  const hidden = await hiddenOf(deps, input.tenant, schema, data, limits);
  const assets = deps.assets ? await deps.assets.load(input.tenant, schema) : NO_LOADED_ASSETS;
  input.signal?.throwIfAborted();
  const excelOptions = { limits, imageAllowlist: deps.imageAllowlist ?? [], watermark: input.watermark, title: input.title, hidden, assetImages: assets.dataUrls };
  return { limits, data, schema, assets, excelOptions };
}

export interface StreamExcelInput extends Omit<RenderDocumentInput, 'format'> {
  /**
   * Top-level array variables whose elements are read in batches instead of held (a report's
   * stored rows). The caller checked each with canStreamVariable and gives it as an empty array in
   * `variables` (declared variables are still checked; no calculated variable may read it).
   */
  sources: Readonly<Record<string, RowSource>>;
}

/**
 * A workbook written to `write` as it is built, never whole in memory (report outputs of any
 * size). RENDER_OUTPUT_MAX_BYTES stops it with ERR_LIMIT_011 as soon as the bytes pass it; the
 * caller discards what it stored. Answers the workbook's size.
 */
export async function streamExcelDocument(deps: RenderDeps, input: StreamExcelInput, write: (chunk: Buffer) => Promise<void>): Promise<{ bytes: number }> {
  const { limits, data, excelOptions } = await prepare(deps, input);
  const excel = deps.excelRenderer ?? sharedExcelThreads();
  let bytes = 0;
  const io = {
    sources: input.sources,
    async write(chunk: Buffer) {
      bytes += chunk.length;
      if (bytes > limits.maxOutputBytes) {
        throw new AppError('ERR_LIMIT_011', `Rendered document is over the limit of ${limits.maxOutputBytes} bytes`, { limit: limits.maxOutputBytes, size: bytes });
      }
      await write(chunk);
    },
  };
  await excel.streamExcel(input.template.schema, data, excelOptions, io, input.signal);
  return { bytes };
}

/** The instances `visibleIf` hides, decided in the evaluation workers under the tenant's budget; none without conditions. */
function hiddenOf(deps: RenderDeps, tenant: string, schema: TemplateSchema, data: ResolvedData, limits: RenderLimits): Promise<string[]> {
  if (!hasConditions(schema)) return Promise.resolve([]);
  return deps.evaluator.check(tenant, 'hiddenComponents', { schema, data, maxLoopIterations: limits.maxLoopIterations });
}

/**
 * RENDER_OUTPUT_MAX_BYTES: a file over it is neither answered (preview) nor stored (generation).
 * Pages, rows and HTML are bounded before, but images and fonts can still make a few pages huge.
 */
function withinOutputLimit(body: Buffer, max: number): Buffer {
  if (body.length > max) {
    throw new AppError('ERR_LIMIT_011', `Rendered document is ${body.length} bytes, over the limit of ${max} bytes`, { limit: max, size: body.length });
  }
  return body;
}
