import type { AssetRows } from '../../db/templates/asset-rows';
import { NO_ASSETS, type DocumentAssets, type FontFace } from '../../domain/templates/asset-refs';
import type { TemplateSchema } from '../../domain/templates/template.types';
import type { PageAssets } from './pdf-renderer';

/**
 * The assets a document uses, loaded for its render (docs/templates.md "Assets and fonts"): only
 * what the template names, only from the document's own project (db/templates/asset-rows.ts). An
 * asset id of another project, or one deleted since, is simply not found: its image shows its alt
 * text, its font falls back to the built-in ones.
 */

export interface LoadedAssets {
  /** What the HTML needs (build-html.ts). */
  document: DocumentAssets;
  /** The bytes the printer serves the page (chromium-page.ts). */
  bodies: PageAssets;
  /** Images as data URLs, for workbooks (they embed PNG and JPEG; other kinds show their alt text). */
  dataUrls: Record<string, string>;
  /** The static PDFs the template appends to its documents (terms and conditions), in order. */
  appendPdfs?: Buffer[];
}

export interface AssetLoader {
  load(projectId: string, schema: TemplateSchema): Promise<LoadedAssets>;
}

export const NO_LOADED_ASSETS: LoadedAssets = { document: NO_ASSETS, bodies: new Map(), dataUrls: {} };

type Body = { contentType: string; body: Buffer };

/**
 * Reads assets from Postgres (`rows`: db/templates/asset-rows.ts `assetRows`). An asset's bytes never
 * change (a new upload is a new asset), so they are kept in a cache of `cacheBytes` shared by the
 * renders of this process (least recently used out first): the same logo on a thousand invoices is
 * read once. Which assets the project has is asked every time, so a deleted asset stops rendering at once.
 */
export function databaseAssets(rows: AssetRows, cacheBytes = 64 * 1024 * 1024): AssetLoader {
  const cache = new Map<string, Body>();
  let cached = 0;
  const remember = (id: string, entry: Body) => {
    if (entry.body.length > cacheBytes / 4) return;
    cache.set(id, entry);
    cached += entry.body.length;
    for (const [key, old] of cache) {
      if (cached <= cacheBytes) break;
      cache.delete(key);
      cached -= old.body.length;
    }
  };
  const recall = (id: string): Body | undefined => {
    const entry = cache.get(id);
    if (entry) {
      // Re-inserted: the map's order is the order of use.
      cache.delete(id);
      cache.set(id, entry);
    }
    return entry;
  };

  /**
   * The PDFs `schema.appendPdfs` names, in its order: only the project's PDF assets (one of another
   * project, or deleted since, is not found and not appended, like an image's).
   */
  const appended = async (projectId: string, ids: string[]): Promise<Buffer[]> => {
    if (ids.length === 0) return [];
    const wanted = ids.map((id) => id.toLowerCase());
    // Which the project has is asked every time; only the bytes not cached are read.
    const present = await rows.pdfIds(projectId, wanted);
    const uncached = present.filter((id) => !cache.has(id));
    const fetched = await rows.contents(projectId, uncached);
    for (const [id, body] of fetched) remember(id, { contentType: 'application/pdf', body });
    const has = new Set(present);
    return wanted.flatMap((id) => {
      const body = has.has(id) ? (fetched.get(id) ?? recall(id)?.body) : undefined;
      return body ? [body] : [];
    });
  };

  return {
    async load(projectId, schema) {
      const [named, appendPdfs] = await Promise.all([rows.namedBy(projectId, schema), appended(projectId, schema.appendPdfs ?? [])]);
      if (named.length === 0) return appendPdfs.length > 0 ? { ...NO_LOADED_ASSETS, appendPdfs } : NO_LOADED_ASSETS;
      const fetched = await rows.contents(projectId, named.filter((a) => !cache.has(a.id)).map((a) => a.id));
      const bodies = new Map<string, Body>();
      for (const a of named) {
        const content = fetched.get(a.id);
        const entry = content ? { contentType: a.mediaType, body: content } : recall(a.id);
        if (content) remember(a.id, entry!);
        if (entry) bodies.set(a.id, entry);
      }
      const present = named.filter((a) => bodies.has(a.id));
      const images = present.filter((a) => a.kind === 'image');
      const dataUrl = (id: string) => `data:${bodies.get(id)!.contentType};base64,${bodies.get(id)!.body.toString('base64')}`;
      const fonts: FontFace[] = present
        .filter((a) => a.kind === 'font')
        .flatMap((a) => a.families.map((family) => ({ id: a.id, family, weight: a.fontWeight ?? 400, style: a.fontStyle === 'italic' ? ('italic' as const) : ('normal' as const), mediaType: a.mediaType })));
      return {
        document: { images: images.map((a) => a.id), inline: Object.fromEntries(images.filter((a) => a.inArea).map((a) => [a.id, dataUrl(a.id)])), fonts, served: present.map((a) => a.id) },
        bodies,
        dataUrls: Object.fromEntries(images.filter((a) => a.mediaType === 'image/png' || a.mediaType === 'image/jpeg').map((a) => [a.id, dataUrl(a.id)])),
        ...(appendPdfs.length > 0 ? { appendPdfs } : {}),
      };
    },
  };
}
