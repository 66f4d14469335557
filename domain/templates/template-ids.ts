import { slugify } from '../identity/slugs';
import { randomBase62 } from '../signing';
import { isUuid } from '../ids';

/** Still named here for the versioned-resource services that import it from this module. */

/** How a template is addressed: id (UUID), shortId (`etpl_…`) or slug (spec, Template). */

export const SHORT_ID_PREFIX = 'etpl_';

/** `etpl_` + 12 base62 characters (about 71 bits): unique by the index, unguessable in practice. */
export function newShortId(): string {
  return SHORT_ID_PREFIX + randomBase62(12);
}

/**
 * Path segments the template routers answer themselves (`/api/templates/import`, the legacy
 * `/api/templates/attachment/…` alias): a template with such a slug could never be reached by it.
 */
const RESERVED_SLUGS = new Set(['attachment', 'import', 'examples', 'component-types', 'bulk-delete', 'validate-schema', 'validate-variables', 'v1']);

/**
 * The readable slug for a resource's name (templates, reporting queries). Unlike a project's, it
 * must also not be mistaken for another kind of reference: a UUID-shaped slug would be read as an
 * id, and one of the `reserved` path segments would be answered by the router itself, so either
 * gets `-<kind>` appended. A name without letters or digits gets `<kind>`.
 */
export function resourceSlug(name: string, kind: string, reserved: ReadonlySet<string>): string {
  const hasText = /[a-z0-9]/i.test(name.normalize('NFKD').replace(/[\u0300-\u036f]/g, ''));
  const base = hasText ? slugify(name) : kind;
  return reserved.has(base) || isUuid(base) ? `${base}-${kind}` : base;
}

export function templateSlug(name: string): string {
  return resourceSlug(name, 'template', RESERVED_SLUGS);
}

/** A fallback slug for when the readable one is taken in the project. */
export function suffixedSlug(base: string): string {
  return `${base.slice(0, 48)}-${randomBase62(6).toLowerCase()}`;
}
