import { UUID_PATTERN } from '../../ids';

/**
 * `asset:<id>`: how a template names one of its project's assets (docs/templates.md "Assets and
 * fonts"), and where Chromium is told to fetch them.
 */

export const ASSET_ID = UUID_PATTERN;
/** An `asset:` reference as a whole value (an image's src, a font family). */
export const ASSET_REF = new RegExp(`^asset:(${ASSET_ID})$`);

/**
 * Where Chromium fetches a document's assets: no such host exists (`.invalid`); the renderer's
 * request interception answers these URLs from the bytes loaded for the document, and nothing
 * else leaves the browser.
 */
export const ASSET_ORIGIN = 'https://assets.formwork.invalid';

/** The CSS family name of a `fontFamily` value: a font named by `asset:<id>` is declared as `fw-asset-<id>`. */
export function cssFontFamily(value: string): string {
  const m = ASSET_REF.exec(value);
  return m ? `fw-asset-${m[1].toLowerCase()}` : value;
}
