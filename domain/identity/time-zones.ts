/**
 * IANA time zone names. `Intl.supportedValuesOf('timeZone')` lists the canonical zones but not
 * every valid name (no `UTC`, no `Etc/GMT+5`, no renamed links such as `Asia/Calcutta`), so a
 * name outside the list is accepted when Intl.DateTimeFormat knows it and it has the shape of an
 * IANA name (offsets such as `+01:00`, which newer engines accept, are not zone names).
 */

let canonical: Map<string, string> | undefined;

function canonicalZones(): Map<string, string> {
  canonical ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z]));
  return canonical;
}

const IANA_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** The zone's name in its proper spelling, or undefined when `name` is not an IANA zone. */
export function normalizeTimeZone(name: string): string | undefined {
  const listed = canonicalZones().get(name.toLowerCase());
  if (listed) return listed;
  if (!IANA_SHAPE.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
