import type { QueryEntity } from '../../db/reporting/query.entity';
import type { QueryVersionEntity } from '../../db/reporting/query-version.entity';
import type { VersionRecord } from './queries.service';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** A query object (docs/reporting.md "Query objects"); lists leave out the text, request and transform. */
export function presentQuery(q: QueryEntity, options: { withText?: boolean } = {}) {
  return {
    id: q.id,
    shortId: q.shortId,
    slug: q.slug,
    name: q.name,
    description: q.description,
    folderId: q.folderId,
    datasourceId: q.datasourceId,
    language: q.language,
    ...(options.withText === false ? {} : { text: q.text, request: q.request ?? null, transform: q.transform ?? null }),
    parameters: q.parameters,
    expectedColumns: q.expectedColumns,
    maxRows: q.maxRows,
    timeoutSeconds: q.timeoutSeconds,
    onRowLimit: q.onRowLimit,
    isPublished: q.isPublished,
    latestVersion: q.latestVersion,
    publishedAt: iso(q.publishedAt),
    createdAt: q.createdAt.toISOString(),
    updatedAt: q.updatedAt.toISOString(),
  };
}

/** The answer of POST …/publish. */
export function presentPublished(v: QueryVersionEntity) {
  return { id: v.id, queryId: v.queryId, version: v.version, publishedAt: iso(v.publishedAt) };
}

/** An item of GET …/versions. */
export function presentVersion({ version: v, publishedBy }: VersionRecord) {
  return { id: v.id, version: v.version, releaseNotes: v.releaseNotes, publishedAt: iso(v.publishedAt), publishedBy };
}

/** GET …/versions/:version: a query version (docs/reporting.md "Query objects"). */
export function presentVersionDetail(record: VersionRecord) {
  const v = record.version;
  return { ...presentVersion(record), queryId: v.queryId, datasourceId: v.datasourceId, definition: v.definition };
}
