import jsonata from 'jsonata';
import { RE2JS } from 're2js';

/**
 * Every regular expression a tenant writes (ObjectSchema `pattern`, freetext required and
 * forbidden patterns, regexes inside JSONata rules and calculated variables) runs on RE2JS, a
 * linear-time engine with RE2 semantics: matching costs O(pattern × text) whatever the pattern,
 * so `^(a+)+$` over a megabyte is as harmless as `^a+$`. There is no other engine and no
 * heuristic: a pattern RE2 cannot run (backreferences, lookahead, lookbehind) is refused when it is
 * saved, with RE2's reason. docs/security.md ("Untrusted input") lists the syntax differences.
 */

const MAX_PATTERN_LENGTH = 512;

export interface UserRegex {
  readonly source: string;
  /** Unanchored search, like RegExp.prototype.test. */
  test(text: string): boolean;
}

export type UserRegexResult = { ok: true; regex: UserRegex } | { ok: false; reason: string };

const HEX = /^[0-9A-Fa-f]$/;

/**
 * ECMAScript spellings RE2 does not read, rewritten to RE2's: `\uXXXX` and `\u{X…}` become
 * `\x{X…}`. A scanner, so it is linear; everything else passes through unchanged.
 */
export function toRe2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = pattern[i + 1];
    if (next === 'u') {
      if (pattern[i + 2] === '{') {
        const close = pattern.indexOf('}', i + 3);
        const digits = close > 0 ? pattern.slice(i + 3, close) : '';
        if (digits.length > 0 && digits.length <= 6 && [...digits].every((d) => HEX.test(d))) {
          out += `\\x{${digits}}`;
          i = close;
          continue;
        }
      } else {
        const digits = pattern.slice(i + 2, i + 6);
        if (digits.length === 4 && [...digits].every((d) => HEX.test(d))) {
          out += `\\x{${digits}}`;
          i += 5;
          continue;
        }
      }
    }
    // Any other escape is copied whole, so `\\u0041` stays a backslash followed by `u0041`.
    out += c + (next ?? '');
    i += 1;
  }
  return out;
}

function flagBits(flags: string): number {
  let bits = 0;
  if (flags.includes('i')) bits |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) bits |= RE2JS.MULTILINE;
  if (flags.includes('s')) bits |= RE2JS.DOTALL;
  return bits;
}

function compileRe2(pattern: string, flags: string): { ok: true; re: RE2JS } | { ok: false; reason: string } {
  if (typeof pattern !== 'string') return { ok: false, reason: 'pattern must be a string' };
  if (pattern.length > MAX_PATTERN_LENGTH) return { ok: false, reason: `pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  try {
    return { ok: true, re: RE2JS.compile(toRe2Syntax(pattern), flagBits(flags)) };
  } catch (err) {
    const message = (err as Error).message.replace(/^error parsing regexp: /, '');
    return { ok: false, reason: `not supported by the linear-time (RE2) engine: ${message}` };
  }
}

/** Compiles a tenant's pattern, or says why it is refused. */
export function compileUserRegex(pattern: string, flags = ''): UserRegexResult {
  const compiled = compileRe2(pattern, flags);
  if (!compiled.ok) return compiled;
  const { re } = compiled;
  return { ok: true, regex: { source: pattern, test: (text) => re.test(text) } };
}

/**
 * The RegexEngine JSONata is given (for `/…/` literals used by `$match`, `$replace`, `$split`,
 * `$contains` and the `~>` operators): an object with RegExp's `exec` and `lastIndex`, matching on
 * RE2JS. JSONata builds its regexes only from literals, and `$eval` parses at run time, so this
 * is the last line as well: a literal RE2 cannot run throws (a rule `error`, a failed variable).
 */
class JsonataRegexEngine {
  lastIndex = 0;
  private readonly re: RE2JS;

  constructor(source: RegExp | string, flags?: string) {
    const pattern = typeof source === 'string' ? source : source.source;
    const compiled = compileRe2(pattern, typeof source === 'string' ? (flags ?? '') : source.flags);
    if (!compiled.ok) throw new Error(`regular expression /${pattern.slice(0, 60)}/ refused: ${compiled.reason}`);
    this.re = compiled.re;
  }

  exec(text: string): RegExpExecArray | null {
    const m = this.re.matcher(text);
    if (this.lastIndex > text.length || !m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: Array<string | undefined> = [];
    for (let g = 0; g <= m.groupCount(); g += 1) groups.push(m.group(g) ?? undefined);
    const result = Object.assign(groups, { index: m.start(), input: text }) as unknown as RegExpExecArray;
    this.lastIndex = m.end();
    return result;
  }

  test(text: string): boolean {
    return this.exec(text) !== null;
  }
}

/** JSONata options that route every regex of an expression to the linear engine. */
export const JSONATA_REGEX = { RegexEngine: JsonataRegexEngine as unknown as RegExpConstructor };

/**
 * Problems of a JSONata expression, checked when it is saved: whether it parses, and whether
 * every regex literal in it runs on the linear engine. Empty when it may be saved. Parsing is
 * linear in the expression, whose length the callers bound.
 */
export function jsonataProblems(expression: string): string[] {
  let ast: unknown;
  try {
    ast = jsonata(expression).ast();
  } catch (err) {
    const e = err as { message?: string; position?: number };
    return [`does not parse: ${e.message ?? 'invalid expression'}${e.position !== undefined ? ` (at character ${e.position})` : ''}`];
  }
  const problems: string[] = [];
  const seen = new Set<unknown>();
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    if (node instanceof RegExp) {
      const compiled = compileRe2(node.source, node.flags);
      if (!compiled.ok) problems.push(`regular expression /${node.source.slice(0, 60)}/ ${compiled.reason}`);
      continue;
    }
    for (const child of Object.values(node)) stack.push(child);
  }
  return problems;
}
