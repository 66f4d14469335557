import Joi from 'joi';
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

/** Strips `{{ }}` so a data path can be looked up whichever way it was written. */
export function bareDataPath(path: string): string {
  return path.replace(/^\s*\{\{\s*|\s*\}\}\s*$/g, '');
}
