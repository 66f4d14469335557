import type { TemplateAssetEntity } from '../../db/templates/asset.entity';

/** An asset as the API answers it: everything but its bytes (GET /api/assets/:id/content has those). */
export function presentAsset(a: TemplateAssetEntity) {
  return {
    id: a.id,
    kind: a.kind,
    name: a.name,
    mediaType: a.mediaType,
    sizeBytes: a.sizeBytes,
    sha256: a.sha256,
    /** What a template writes to use it: an image's `src`, a `fontFamily`, or `url()` in css. */
    reference: `asset:${a.id}`,
    width: a.width,
    height: a.height,
    fontFamily: a.fontFamily,
    fontWeight: a.fontWeight,
    fontStyle: a.fontStyle,
    createdBy: a.createdBy,
    createdAt: a.createdAt.toISOString(),
  };
}
