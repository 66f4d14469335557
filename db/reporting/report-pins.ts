import type { Queryable } from '../sql';

/**
 * How many live reports have a published version pinning query object `queryId` (any version of
 * theirs: a run may name an older one). The query delete check (ERR_QRY_012) reads it.
 */
export async function reportsPinningQuery(db: Queryable, queryId: string): Promise<number> {
  const [row]: Array<{ n: number }> = await db.query(
    `SELECT count(DISTINCT r.id)::int AS n
       FROM reporting_report_versions v
       JOIN reporting_reports r ON r.id = v.report_id AND r.deleted_at IS NULL
      WHERE v.definition->'datasets' @> jsonb_build_array(jsonb_build_object('queryId', $1::text))`,
    [queryId],
  );
  return row?.n ?? 0;
}
