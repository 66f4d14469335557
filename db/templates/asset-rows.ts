import type { DataSource, EntityManager } from 'typeorm';
import { assetReferences } from '../../domain/templates/asset-refs';
import { ASSET_REF } from '../../domain/templates/components/asset-ref';
import type { TemplateSchema } from '../../domain/templates/template.types';

/** An asset a template names, without its bytes. */
export interface NamedAsset {
  id: string;
  kind: 'image' | 'font';
  name: string;
  mediaType: string;
  fontWeight: number | null;
  fontStyle: string | null;
  /** Fonts: the CSS families to declare it under (`fw-asset-<id>` when named by id, its own family when named by that). */
  families: string[];
  /** Images: named by the header or footer (printed without fetching: a data URL). */
  inArea: boolean;
}

/**
 * The assets of the project a schema names (domain/templates/asset-refs.ts): images and css
 * `url()`s by id, fonts by id or by family name (the theme's, a style's, or one the css mentions).
 * Only the project's own: an id of another project is not found. One query, no bytes.
 */
export async function assetsNamedBy(db: DataSource | EntityManager, projectId: string, schema: TemplateSchema): Promise<NamedAsset[]> {
  const refs = assetReferences(schema);
  const fontIds = new Set<string>();
  const familyNames = new Set<string>();
  for (const family of refs.families) {
    const m = ASSET_REF.exec(family);
    if (m) fontIds.add(m[1].toLowerCase());
    else familyNames.add(family.toLowerCase());
  }
  const ids = [...new Set([...refs.ids, ...fontIds])];
  if (ids.length === 0 && familyNames.size === 0 && !refs.cssNamesFonts) return [];
  const rows: Array<{ id: string; kind: 'image' | 'font'; name: string; media_type: string; font_family: string | null; font_weight: number | null; font_style: string | null }> = await db.query(
    `SELECT id, kind, name, media_type, font_family, font_weight, font_style FROM template_assets
      WHERE project_id = $1 AND (id = ANY($2::uuid[]) OR (kind = 'font' AND ($3 OR lower(font_family) = ANY($4::text[]))))
      ORDER BY created_at, id`,
    [projectId, ids, refs.cssNamesFonts, [...familyNames]],
  );
  const css = (schema.css ?? '').toLowerCase();
  const named: NamedAsset[] = [];
  for (const r of rows) {
    const base = { id: r.id, kind: r.kind, name: r.name, mediaType: r.media_type, fontWeight: r.font_weight, fontStyle: r.font_style, families: [] as string[], inArea: false };
    if (r.kind === 'image') {
      if (refs.ids.includes(r.id)) named.push({ ...base, inArea: refs.areaIds.includes(r.id) });
      continue;
    }
    const family = (r.font_family ?? '').toLowerCase();
    if (fontIds.has(r.id)) base.families.push(`fw-asset-${r.id}`);
    if (family && (familyNames.has(family) || (refs.cssNamesFonts && css.includes(family)))) base.families.push(r.font_family!);
    if (base.families.length > 0 || refs.ids.includes(r.id)) named.push(base);
  }
  return named;
}

/** The bytes of some of the project's assets, by id. */
export async function assetContents(db: DataSource | EntityManager, projectId: string, ids: string[]): Promise<Map<string, Buffer>> {
  if (ids.length === 0) return new Map();
  const rows: Array<{ id: string; content: Buffer }> = await db.query(`SELECT id, content FROM template_assets WHERE project_id = $1 AND id = ANY($2::uuid[])`, [projectId, ids]);
  return new Map(rows.map((r) => [r.id, r.content]));
}

/** The ids among `ids` of the project's PDF assets (a template's appended PDFs). */
async function pdfAssetIds(db: DataSource | EntityManager, projectId: string, ids: string[]): Promise<string[]> {
  const rows: Array<{ id: string }> = await db.query(`SELECT id FROM template_assets WHERE project_id = $1 AND kind = 'pdf' AND id = ANY($2::uuid[])`, [projectId, ids]);
  return rows.map((r) => r.id);
}

/** The asset queries a render's asset loader runs (adapters/rendering/render-assets.ts), on `db`. */
export interface AssetRows {
  namedBy(projectId: string, schema: TemplateSchema): Promise<NamedAsset[]>;
  contents(projectId: string, ids: string[]): Promise<Map<string, Buffer>>;
  pdfIds(projectId: string, ids: string[]): Promise<string[]>;
}

export function assetRows(db: DataSource | EntityManager): AssetRows {
  return {
    namedBy: (projectId, schema) => assetsNamedBy(db, projectId, schema),
    contents: (projectId, ids) => assetContents(db, projectId, ids),
    pdfIds: (projectId, ids) => pdfAssetIds(db, projectId, ids),
  };
}
