import { charLength } from './formats';
import { MAX_DETAILS, type FreetextConfig, type ValidationDetail } from './gate.types';
import { compileUserRegex } from '../user-regex';

/**
 * Freetext mode (contract §5): the payload is a string checked for length and required or
 * forbidden patterns; business rules then see `{text, length, lines, words}`.
 */

export interface FreetextFacts {
  text: string;
  length: number;
  lines: number;
  words: number;
}

export function freetextFacts(text: string): FreetextFacts {
  return {
    text,
    length: charLength(text),
    lines: text === '' ? 0 : text.split(/\r\n|\r|\n/).length,
    words: text.split(/\s+/).filter(Boolean).length,
  };
}

export function compileFreetext(config: FreetextConfig | null): (text: unknown) => ValidationDetail[] {
  const required = (config?.requiredPatterns ?? []).map((p) => ({ source: p, compiled: compileUserRegex(p) }));
  const forbidden = (config?.forbiddenPatterns ?? []).map((p) => ({ source: p, compiled: compileUserRegex(p) }));
  const { minLength, maxLength } = config ?? {};
  return (text) => {
    const out: ValidationDetail[] = [];
    if (typeof text !== 'string') return [{ field: 'text', code: 'TYPE', message: 'the payload must be a string of text' }];
    const n = charLength(text);
    if (minLength !== undefined && n < minLength) out.push({ field: 'text', code: 'MIN_LENGTH', message: `must be at least ${minLength} characters long` });
    if (maxLength !== undefined && n > maxLength) out.push({ field: 'text', code: 'MAX_LENGTH', message: `must be at most ${maxLength} characters long` });
    for (const p of required) {
      if (p.compiled.ok && !p.compiled.regex.test(text)) out.push({ field: 'text', code: 'PATTERN', message: `must match the required pattern ${p.source}` });
    }
    for (const p of forbidden) {
      if (p.compiled.ok && p.compiled.regex.test(text)) out.push({ field: 'text', code: 'PATTERN', message: `must not match the forbidden pattern ${p.source}` });
    }
    return out.slice(0, MAX_DETAILS);
  };
}
