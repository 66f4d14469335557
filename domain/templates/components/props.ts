import Joi from 'joi';
import { isRegexSpace } from '../interpolate';
import { COLUMN_FORMATS } from '../template.types';

/** Joi pieces shared by the component props schemas. */

/** Safe to place in a style attribute: a number (mm) or a number with a CSS unit. */
export const length = Joi.alternatives().try(
  Joi.number().min(0).max(2000),
  Joi.string().pattern(/^\d+(?:\.\d+)?(?:mm|cm|in|px|pt|%)$/, 'CSS length (e.g. 20mm, 1in, 50%)'),
);

export const text = Joi.string().allow('').max(100_000);

/** A variable path (`items`, `order.lines`, `item.children`), optionally written as `{{path}}`. */
export const dataPath = Joi.string()
  .trim()
  .pattern(/^(?:\{\{\s*)?[A-Za-z_$][\w$]*(?:(?:\.[\w$]+)|(?:\[\d+\]))*(?:\s*\}\})?$/, 'variable path')
  .max(500);

export const format = Joi.string().valid(...COLUMN_FORMATS);

/**
 * Strips `{{ }}` so a data path can be looked up whichever way it was written: a leading
 * `ws* {{ ws*` and a trailing `ws* }} ws*`, each where present. A scanner: the pattern it replaces
 * (`/^\s*\{\{\s*|\s*\}\}\s*$/g`) retried its unanchored second half from every position of a
 * long run of spaces, quadratic in the run.
 */
export function bareDataPath(path: string): string {
  let from = skipSpaces(path, 0);
  from = path.startsWith('{{', from) ? skipSpaces(path, from + 2) : 0;
  let to = path.length;
  while (to > from && isRegexSpace(path.charCodeAt(to - 1))) to -= 1;
  if (to - 2 >= from && path.startsWith('}}', to - 2)) {
    to -= 2;
    while (to > from && isRegexSpace(path.charCodeAt(to - 1))) to -= 1;
  } else {
    to = path.length;
  }
  return path.slice(from, to);
}

function skipSpaces(text: string, i: number): number {
  while (i < text.length && isRegexSpace(text.charCodeAt(i))) i += 1;
  return i;
}
