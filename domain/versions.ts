import { isUuid } from './ids';

/**
 * The pure rules of versioned resources (templates, reporting queries and reports, gate schemas;
 * db/versioned-resource.ts applies them): how a version is named in a path, which number the next
 * one takes and what a restore writes as its release notes.
 */

/** A version named by its number (1, 2, …) or, where a resource allows it, by its id. */
export type VersionKey = { number: number } | { id: string };

const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/;

/**
 * A path's `:version` as a key: a number of at most nine digits, or a UUID when `ids` allows it
 * (templates). Null for anything else: each resource answers that with its own code.
 */
export function parseVersionKey(param: string, options: { ids?: boolean } = {}): VersionKey | null {
  if (options.ids && isUuid(param)) return { id: param.toLowerCase() };
  return VERSION_NUMBER.test(param) ? { number: Number(param) } : null;
}

/**
 * Versions are numbered 1, 2, 3… per resource without gaps; a restore takes the next number too.
 * Callers hold the parent row's lock, so two publishes at once get consecutive numbers.
 */
export function nextVersionNumber(current: number): number {
  return current + 1;
}

/** The release notes of a restore: the caller's, or a line naming the version it copies. */
export function restoreNotes(given: string | null | undefined, restored: number): string {
  return given || `Restored from version ${restored}`;
}
