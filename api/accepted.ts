/**
 * One answer for accepted work (docs/architecture.md "Accepted work"): a request that starts work
 * which goes on after the answer (a document, a batch, a report run, a job run, a schedule's run now)
 * creates a record to follow, so it answers 201 (the spec's status for a created resource; it lists no
 * 202) with `Location` at the record's GET URL and the same absolute URL as the body's `statusUrl`.
 */

/** The absolute URL of `path` (`/api/...`) under PUBLIC_URL. */
export function statusUrlOf(publicUrl: string, path: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${path}`;
}

/** The answer of accepted work whose record `path` reads: 201, `Location`, `statusUrl`. */
export function acceptedAnswer<B extends object>(publicUrl: string, path: string, body: B): { status: 201; headers: { location: string }; body: B & { statusUrl: string } } {
  const statusUrl = statusUrlOf(publicUrl, path);
  return { status: 201, headers: { location: statusUrl }, body: { ...body, statusUrl } };
}
