import { randomBase62 } from '../signing';

/** URL-friendly slug: lower-case ASCII letters, digits and single dashes. */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return slug || 'project';
}

/** A slug that is very unlikely to be taken: the readable part plus a short random suffix. */
export function uniqueSlug(text: string): string {
  return `${slugify(text)}-${randomBase62(6).toLowerCase()}`;
}

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
