import { AppError } from '../errors';
import type { RenderContext } from './components/context';
import { cssLength, lengthMm } from './components/context';
import { anyComponent, COMPONENTS, CONTAINER_TYPES, isComponentType, normalizeProps } from './components/registry';
import { cssSchema, themeCss } from './components/style';
import { Outline } from './components/toc';
import { ASSET_ORIGIN } from './components/asset-ref';
import { cssWithAssets, fontFaceCss, NO_ASSETS, type DocumentAssets } from './asset-refs';
import { DEFAULT_FORMAT_OPTIONS, type FormatOptions } from './format';
import { escapeHtml, interpolateHtml } from './interpolate';
import { LoopBudget } from './loop-budget';
import { FONT_STACK, headerFooterStyle, STYLESHEET } from './styles';
import {
  DEFAULT_RENDER_LIMITS,
  MAX_NESTING_DEPTH,
  type CommonProps,
  type Component,
  type PageArea,
  type PageSize,
  type RenderLimits,
  type ResolvedData,
  type TemplateSchema,
} from './template.types';

/** Text printed across every page of documents from the free quota. */
export const DEFAULT_WATERMARK = 'FORMWORK FREE';

export interface BuildHtmlOptions {
  limits?: Partial<RenderLimits>;
  /** Hosts (see image-hosts.ts) whose http(s) images a document may load. */
  imageAllowlist?: readonly string[];
  /** `true` prints DEFAULT_WATERMARK; a string prints that text. */
  watermark?: boolean | string;
  /** Becomes the PDF's title metadata. */
  title?: string;
  /** Paths of component instances whose `visibleIf` is false (visibility.ts `hiddenComponents`). */
  hidden?: readonly string[];
  /** The project's assets the template names (asset-refs.ts; their bytes go to the printer, not into the HTML). */
  assets?: DocumentAssets;
}

/** Everything Chromium needs to print the document: the page and the print options. */
export interface HtmlDocument {
  html: string;
  pageSize: PageSize;
  landscape: boolean;
  margins: { top: string; right: string; bottom: string; left: string };
  displayHeaderFooter: boolean;
  headerTemplate: string;
  footerTemplate: string;
  /** The page has a table of contents whose page numbers the printer fills in (components/toc.ts). */
  toc?: true;
  /** The header and footer of the first page, when the template gives either a `firstPage` variant. */
  firstPage?: { headerTemplate: string; footerTemplate: string };
}

const DEFAULT_MARGINS = { top: 20, right: 15, bottom: 20, left: 15 };

/** Page sizes in millimetres, portrait. */
const PAGE_MM: Record<PageSize, [number, number]> = { A4: [210, 297], Letter: [215.9, 279.4], Legal: [215.9, 355.6], A3: [297, 420], A5: [148, 210] };

/** The width between the side margins, in millimetres (a margin that is not an absolute length counts as the default). */
function contentWidthMm(schema: TemplateSchema): number {
  const [w, h] = PAGE_MM[schema.pageSize] ?? PAGE_MM.A4;
  const page = schema.orientation === 'landscape' ? h : w;
  const side = (v: string | number | undefined, fallback: number) => lengthMm(v) ?? fallback;
  return Math.max(20, page - side(schema.margins?.left, DEFAULT_MARGINS.left) - side(schema.margins?.right, DEFAULT_MARGINS.right));
}

export function formatOptionsOf(schema: TemplateSchema): FormatOptions {
  return { locale: schema.locale ?? DEFAULT_FORMAT_OPTIONS.locale, currency: schema.currency ?? DEFAULT_FORMAT_OPTIONS.currency };
}

export function limitsOf(limits?: Partial<RenderLimits>): RenderLimits {
  return { ...DEFAULT_RENDER_LIMITS, ...(limits ?? {}) };
}

function htmlTooLarge(max: number, componentId?: string): AppError {
  return new AppError('ERR_LIMIT_009', `Rendered HTML exceeds the limit of ${max} bytes`, { limit: max, ...(componentId ? { componentId } : {}) });
}

/**
 * Bytes of HTML produced so far. Every component but a repeat is charged as it is rendered (a
 * repeat only wraps what its children were charged), so the sum never exceeds the page's real
 * size, and a template whose loops multiply its output stops at the limit instead of building
 * the whole page first.
 */
class HtmlBudget {
  private used = 0;

  constructor(readonly max: number) {}

  charge(html: string, componentId: string): void {
    this.used += Buffer.byteLength(html, 'utf8');
    if (this.used > this.max) throw htmlTooLarge(this.max, componentId);
  }
}

/**
 * Renders a component list in a scope; shared by sections and containers. `depth` counts the
 * containers around it: a stored template deeper than MAX_NESTING_DEPTH (validation refuses one on
 * save) is refused here too, before it recurses further.
 */
async function renderComponents(
  components: Component[],
  scope: Record<string, unknown>,
  base: Omit<RenderContext, 'scope'>,
  size: HtmlBudget,
  hidden: ReadonlySet<string>,
  depth = 0,
  path = '',
): Promise<string> {
  const parts: string[] = [];
  for (const c of components) {
    if (!isComponentType(c.type)) throw new AppError('ERR_TMPL_008', `Unknown component type '${String(c.type)}'`, { componentId: c.id });
    if (hidden.has(path + c.id)) continue;
    if (depth >= MAX_NESTING_DEPTH && CONTAINER_TYPES.has(c.type)) {
      throw new AppError('ERR_TMPL_008', `Component '${c.id}': containers nest at most ${MAX_NESTING_DEPTH} levels`, { componentId: c.id });
    }
    const props = normalizeProps(c) as CommonProps;
    let html: string;
    try {
      html = await COMPONENTS[c.type].html(c.id, props, {
        ...base,
        scope,
        renderChildren: (children, inner, at = {}) =>
          renderComponents(children, inner, { ...base, widthMm: at.widthMm ?? base.widthMm }, size, hidden, depth + 1, path + (at.segment ?? '')),
      });
    } catch (err) {
      // One component's text outgrew the longest string V8 can hold: far past any limit.
      if (err instanceof RangeError && /invalid string length/i.test(err.message)) throw htmlTooLarge(size.max, c.id);
      throw err;
    }
    if (props.keepTogether || props.pageBreak) {
      const classes = [props.keepTogether ? 'fw-keep' : '', props.pageBreak ? `fw-break-${props.pageBreak}` : ''].filter(Boolean).join(' ');
      html = `<div class="${classes}">${html}</div>`;
    }
    // A container's own markup is small; its children were charged as they rendered.
    if (!CONTAINER_TYPES.has(c.type)) size.charge(html, c.id);
    parts.push(html);
  }
  return parts.join('\n');
}

/**
 * `{page}` and `{pages}` become Chromium's pageNumber/totalPages spans; the rest is interpolated
 * and escaped like any text (`{{page}}` is a variable, not a page number).
 */
export function headerFooterSlot(text: string, scope: ResolvedData, o: FormatOptions): string {
  return text
    .split(/(?<!\{)\{(pages?)\}(?!\})/)
    .map((part, i) => (i % 2 === 1 ? `<span class="${part === 'page' ? 'pageNumber' : 'totalPages'}"></span>` : interpolateHtml(part, scope, o)))
    .join('');
}

/** `{page}` and `{pages}` left as text in rendered components' HTML (single braces) as Chromium's spans. */
const pageNumbers = (html: string): string =>
  html.replace(/(?<!\{)\{(pages?)\}(?!\})/g, (_m, part: string) => `<span class="${part === 'page' ? 'pageNumber' : 'totalPages'}"></span>`);

/**
 * A component area as Chromium's header or footer template: a document of its own, so the page's
 * stylesheet and theme come along inside it; full width between the side margins, nothing clipped.
 */
async function componentArea(components: Component[], render: (components: Component[]) => Promise<string>, padding: string, theme: TemplateSchema['theme']): Promise<string> {
  const html = pageNumbers(await render(components));
  return `<style>${STYLESHEET}${themeCss(theme, FONT_STACK)}</style><div class="fw-page-area" style="width:100%;padding:${padding};font-size:8pt;-webkit-print-color-adjust:exact">${html}</div>`;
}

function headerFooterTemplate(hf: PageArea | undefined, scope: ResolvedData, o: FormatOptions, padding: string, theme: TemplateSchema['theme']): string {
  if (!hf || (!hf.left && !hf.center && !hf.right)) return '<span></span>';
  // Each slot takes the width its text needs (an empty one none) and wraps past it: nothing is clipped.
  const cell = (text: string | undefined, align: string) =>
    `<div style="flex:${text ? '1 1 auto' : '0 1 0'};min-width:0;text-align:${align};overflow-wrap:anywhere">${text ? headerFooterSlot(text, scope, o) : ''}</div>`;
  return `<div style="${headerFooterStyle(padding, theme)}">${cell(hf.left, 'left')}${cell(hf.center, 'center')}${cell(hf.right, 'right')}</div>`;
}

/**
 * A Content-Security-Policy as a second wall behind the renderer's request interception:
 * no scripts, no frames, no fonts or styles from outside, images only from data: and the allow-list.
 */
function contentSecurityPolicy(allowlist: readonly string[]): string {
  const hosts = allowlist.filter((h) => /^[\w.*:[\]-]+$/.test(h)).flatMap((h) => [`http://${h}`, `https://${h}`]);
  return ["default-src 'none'", "style-src 'unsafe-inline'", `img-src data: ${ASSET_ORIGIN} ${hosts.join(' ')}`.trim(), `font-src ${ASSET_ORIGIN}`, "script-src 'none'"].join('; ');
}

/**
 * The schema's own CSS, checked again here (a stored template from before the check, or from
 * elsewhere): what the check refuses is not printed.
 */
function authorCss(css: string | undefined, assets: ReadonlySet<string>): string {
  if (!css) return '';
  const { error, value } = cssSchema.validate(css);
  if (error) throw new AppError('ERR_TMPL_008', `css ${error.message}`, { field: 'css' });
  return `<style>${cssWithAssets(value as string, assets)}</style>`;
}

export async function buildHtml(schema: TemplateSchema, data: ResolvedData, options: BuildHtmlOptions = {}): Promise<HtmlDocument> {
  const limits = limitsOf(options.limits);
  const format = formatOptionsOf(schema);
  const imageAllowlist = options.imageAllowlist ?? [];
  const size = new HtmlBudget(limits.maxHtmlBytes);
  const hidden = new Set(options.hidden ?? []);
  const assets = options.assets ?? NO_ASSETS;
  const images = new Set(assets.images);
  const base: Omit<RenderContext, 'scope'> = {
    assetUrl: (id) => (images.has(id) ? `${ASSET_ORIGIN}/${id}` : undefined),
    format,
    budget: new LoopBudget(limits.maxLoopIterations),
    imageAllowlist,
    // Replaced per component with one that knows its depth and path (renderComponents).
    renderChildren: (components, scope) => renderComponents(components, scope, base, size, hidden),
    widthMm: contentWidthMm(schema),
  };

  const outline = anyComponent(schema.sections.map((s) => s.components), (c) => c.type === 'toc') ? new Outline() : undefined;
  const body = { ...base, outline };
  const sections: string[] = [];
  for (const s of schema.sections) {
    const title = s.title ? `<h2 class="fw-section-title">${interpolateHtml(s.title, data, format)}</h2>` : '';
    sections.push(`<section class="fw-section">${title}${await renderComponents(s.components, data, body, size, hidden)}</section>`);
  }
  // The tables of contents, now that every heading is known.
  const content = outline ? outline.fill(sections.join('\n'), (list) => size.charge(list, 'toc')) : sections.join('\n');

  const watermarkText = options.watermark === true ? DEFAULT_WATERMARK : options.watermark || '';
  const watermark = watermarkText ? `<div class="fw-watermark">${escapeHtml(watermarkText)}</div>` : '';
  const m = { ...DEFAULT_MARGINS, ...(schema.margins ?? {}) };
  const margins = { top: cssLength(m.top, '20mm'), right: cssLength(m.right, '15mm'), bottom: cssLength(m.bottom, '20mm'), left: cssLength(m.left, '15mm') };
  const displayHeaderFooter = Boolean(schema.header || schema.footer);

  const html = `<!DOCTYPE html>
<html lang="${escapeHtml((schema.locale ?? 'en').split('-')[0])}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(imageAllowlist))}">
<title>${escapeHtml(options.title ?? '')}</title>
<style>${fontFaceCss(assets.fonts)}${STYLESHEET}${themeCss(schema.theme, FONT_STACK)}</style>${authorCss(schema.css, new Set(assets.served))}
</head>
<body>
${watermark}
${content}
</body>
</html>`;

  const areaPadding = `0 ${margins.right} 0 ${margins.left}`;
  // Chromium prints the header and footer without fetching anything: their images are data URLs.
  const inlineImages = { ...base, assetUrl: (id: string) => (Object.prototype.hasOwnProperty.call(assets.inline, id) ? assets.inline[id] : undefined) };
  const pageArea = (hf: PageArea | undefined) =>
    hf?.components
      ? componentArea(hf.components, (components) => renderComponents(components, data, inlineImages, size, hidden), areaPadding, schema.theme)
      : Promise.resolve(headerFooterTemplate(hf, data, format, areaPadding, schema.theme));
  const headerTemplate = await pageArea(schema.header);
  const footerTemplate = await pageArea(schema.footer);
  const firstPage =
    schema.header?.firstPage || schema.footer?.firstPage
      ? {
          headerTemplate: schema.header?.firstPage ? await pageArea(schema.header.firstPage) : headerTemplate,
          footerTemplate: schema.footer?.firstPage ? await pageArea(schema.footer.firstPage) : footerTemplate,
        }
      : undefined;
  // Everything Chromium is handed counts: the page (section titles, markup, stylesheet) and the headers and footers.
  const bytes = [html, headerTemplate, footerTemplate, firstPage?.headerTemplate ?? '', firstPage?.footerTemplate ?? ''].reduce((sum, part) => sum + Buffer.byteLength(part, 'utf8'), 0);
  if (bytes > limits.maxHtmlBytes) throw htmlTooLarge(limits.maxHtmlBytes);

  return {
    html,
    pageSize: schema.pageSize,
    landscape: schema.orientation === 'landscape',
    margins,
    displayHeaderFooter,
    headerTemplate,
    footerTemplate,
    ...(outline && !outline.empty ? { toc: true as const } : {}),
    ...(firstPage ? { firstPage } : {}),
  };
}
