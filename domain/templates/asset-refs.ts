import { ASSET_ID, ASSET_ORIGIN, ASSET_REF } from './components/asset-ref';
import { anyComponent, childLists, isComponentType } from './components/registry';
import type { Component, PageArea, TemplateSchema } from './template.types';

/**
 * How a template names its assets (docs/templates.md "Assets and fonts"): an image component's
 * `src` of `asset:<id>`, `url(asset:<id>)` in the schema's `css`, and fonts by family name (the
 * theme's `fontFamily`, a component style's `fontFamily`, or a `font-family` in the css). What is
 * found here is all the render loads; the loader keeps to the template's own project.
 */

/** `url(asset:<id>)` in CSS, the quote optional. */
const CSS_ASSET_URL = new RegExp(`url\\(\\s*(['"]?)asset:(${ASSET_ID})\\1\\s*\\)`, 'g');

/** What a document's HTML needs to know of its assets (build-html.ts; the bytes go to the printer). */
export interface DocumentAssets {
  /** Image assets of the project the page may show, by id. */
  images: string[];
  /** Images in the header and footer as data URLs: Chromium prints those areas without fetching anything. */
  inline: Record<string, string>;
  /** The project's fonts the template names, as the families to declare. */
  fonts: FontFace[];
  /** Every asset the printer serves this document, by id (what css `url(asset:<id>)` may point at). */
  served: string[];
}

export interface FontFace {
  id: string;
  family: string;
  weight: number;
  style: 'normal' | 'italic';
  mediaType: string;
}

export const NO_ASSETS: DocumentAssets = { images: [], inline: {}, fonts: [], served: [] };

export interface AssetReferences {
  /** Asset ids named anywhere (images and css). */
  ids: string[];
  /** Of those, the ones image components in the header and footer name. */
  areaIds: string[];
  /** Font families named by the theme and by component styles (as written: a name, or `asset:<id>`). */
  families: string[];
  /** Whether the css names fonts (the loader then matches the project's families against it). */
  cssNamesFonts: boolean;
}

function pageAreas(schema: TemplateSchema): PageArea[] {
  return [schema.header, schema.footer, schema.header?.firstPage, schema.footer?.firstPage].filter((a): a is PageArea => Boolean(a));
}

function imageRefs(lists: Component[][], into: Set<string>): void {
  anyComponent(lists, (c, props) => {
    const m = c.type === 'image' && typeof props.src === 'string' ? ASSET_REF.exec(props.src.trim()) : null;
    if (m) into.add(m[1].toLowerCase());
    return false;
  });
}

function styleFamilies(lists: Component[][], into: Set<string>): void {
  const walk = (components: Component[]) => {
    for (const c of components) {
      const props = (c?.props ?? {}) as Record<string, unknown>;
      const family = (props.style as { fontFamily?: unknown } | undefined)?.fontFamily;
      if (typeof family === 'string') into.add(family);
      if (isComponentType(c?.type)) for (const children of childLists(c.type, props)) if (Array.isArray(children)) walk(children as Component[]);
    }
  };
  lists.forEach(walk);
}

export function assetReferences(schema: TemplateSchema): AssetReferences {
  const areaLists = pageAreas(schema).map((a) => a.components ?? []);
  const bodyLists = schema.sections.map((s) => s.components);
  const ids = new Set<string>();
  const areaIds = new Set<string>();
  imageRefs(bodyLists, ids);
  imageRefs(areaLists, areaIds);
  for (const m of (schema.css ?? '').matchAll(CSS_ASSET_URL)) ids.add(m[2].toLowerCase());
  const families = new Set<string>();
  if (schema.theme?.fontFamily) families.add(schema.theme.fontFamily);
  styleFamilies([...bodyLists, ...areaLists], families);
  return { ids: [...new Set([...ids, ...areaIds])], areaIds: [...areaIds], families: [...families], cssNamesFonts: /font(?:-family)?\s*:/i.test(schema.css ?? '') };
}

/** The css with `url(asset:<id>)` of the project's assets pointing at ASSET_ORIGIN (others stay, and load nothing). */
export function cssWithAssets(css: string, known: ReadonlySet<string>): string {
  return css.replace(CSS_ASSET_URL, (whole, quote: string, id: string) => (known.has(id.toLowerCase()) ? `url(${quote}${ASSET_ORIGIN}/${id.toLowerCase()}${quote})` : whole));
}

/** `@font-face` rules for the fonts, served from ASSET_ORIGIN (families and ids were checked when uploaded). */
export function fontFaceCss(fonts: readonly FontFace[]): string {
  const format = (mediaType: string) => ({ 'font/ttf': 'truetype', 'font/otf': 'opentype', 'font/woff2': 'woff2' })[mediaType] ?? 'truetype';
  return fonts
    .filter((f) => /^[A-Za-z0-9][A-Za-z0-9 _-]{0,99}$/.test(f.family))
    .map((f) => `@font-face{font-family:'${f.family}';src:url(${ASSET_ORIGIN}/${f.id}) format('${format(f.mediaType)}');font-weight:${Math.trunc(f.weight) || 400};font-style:${f.style === 'italic' ? 'italic' : 'normal'}}`)
    .join('');
}
