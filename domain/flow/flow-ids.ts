import { slugify } from '../identity/slugs';
import { randomBase62 } from '../signing';
import { isUuid } from '../ids';

/** Still named here for the versioned-resource services that import it from this module. */

/** How gates and runs are addressed: UUID, shortId (`fgate_…`, `frun_…`) or, for gates, slug. */

export const GATE_SHORT_ID_PREFIX = 'fgate_';
export const RUN_SHORT_ID_PREFIX = 'frun_';

/** 16 base62 characters (about 95 bits): unique by index, unguessable in practice. */
export const newGateShortId = () => GATE_SHORT_ID_PREFIX + randomBase62(16);
export const newRunShortId = () => RUN_SHORT_ID_PREFIX + randomBase62(16);

/**
 * The slug for a gate name. slugify turns `_` into `-`, so a slug never starts with `fgate_`; a
 * UUID-shaped one would be read as an id, so it gets a prefix. `suffix` breaks ties in a workspace.
 */
export function gateSlug(name: string, suffix?: string): string {
  const hasText = /[a-z0-9]/i.test(name.normalize('NFKD').replace(/[\u0300-\u036f]/g, ''));
  let slug = hasText ? slugify(name) : 'gate';
  if (isUuid(slug)) slug = `gate-${slug}`;
  return suffix ? `${slug}-${suffix}` : slug;
}
