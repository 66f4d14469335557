import type { Queryable } from '../sql';
import { AppError } from '../../domain/errors';
import { isUuid } from '../../domain/ids';

/** At most this many channels per run, schedule or job (docs/reporting.md "Limits"). */
const MAX_CHANNELS_PER_TARGET = 10;

/**
 * Channel references of a run, schedule or job body (UUIDs or `rch_` short ids) as the project's
 * channel ids, in the given order without repeats. Another project's or an unknown channel: 400
 * ERR_CHAN_002 naming it, so nothing is opened with a channel that will never deliver.
 */
export async function resolveChannelRefs(db: Queryable, projectId: string, refs: string[] | undefined, field = 'channelIds'): Promise<string[]> {
  if (!refs || refs.length === 0) return [];
  if (refs.length > MAX_CHANNELS_PER_TARGET) throw new AppError('ERR_CHAN_002', `At most ${MAX_CHANNELS_PER_TARGET} channels`, { field, limit: MAX_CHANNELS_PER_TARGET });
  const rows: Array<{ id: string; short_id: string }> = await db.query(
    `SELECT id, short_id FROM reporting_channels WHERE project_id = $1 AND (id::text = ANY($2::text[]) OR short_id = ANY($2::text[]))`,
    [projectId, refs.map((r) => (isUuid(r) ? r.toLowerCase() : r))],
  );
  const ids: string[] = [];
  for (const ref of refs) {
    const row = rows.find((r) => r.id === ref.toLowerCase() || r.short_id === ref);
    if (!row) throw new AppError('ERR_CHAN_002', `Channel ${ref} not found in this project`, { field, channelId: ref });
    if (!ids.includes(row.id)) ids.push(row.id);
  }
  return ids;
}
