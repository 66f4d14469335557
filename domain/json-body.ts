import { AppError } from './errors';

/**
 * Deepest JSON nesting a request body may have. Parsing a deeper body is cheap, but everything
 * after it recurses (JSON.stringify, storing jsonb, handing a payload to an evaluation worker) and
 * would fail with a stack overflow: a 500 instead of the client's mistake. No template, schema or
 * payload the service reads needs more than a few dozen levels. docs/security.md.
 */
export const MAX_JSON_DEPTH = 100;

/** Nesting depth of JSON text, counted in one pass (brackets inside strings do not count); stops past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth -= 1;
    }
  }
  return false;
}

/** 400 ERR_REQ_005. */
export const tooDeep = () => new AppError('ERR_REQ_005', `JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, { limit: MAX_JSON_DEPTH });

/**
 * A JSON request body from its bytes, as the app-wide body parser reads it (any JSON value; an
 * empty body is `{}`): 400 ERR_REQ_005 past MAX_JSON_DEPTH, 400 ERR_REQ_001 when it is not JSON.
 */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.trim() === '') return {};
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('ERR_REQ_001');
  }
}
