import { setFlagsFromString } from 'node:v8';

/**
 * User-supplied regular expressions (schema `pattern`, freetext required/forbidden patterns) run
 * on untrusted payloads of up to 1 MB, so a pattern like `^(a+)+$` must not be able to stall the
 * event loop (ReDoS). No timeout can interrupt a running RegExp, so the guard works up front:
 *
 * 1. V8's linear-time regexp engine (the `l` flag, enabled below) when this Node has it: matching
 *    is then O(pattern × input) whatever the pattern.
 * 2. Patterns that engine cannot run (lookarounds, the `i` flag, large counted repetitions), or
 *    every pattern on a Node without it, run on the backtracking engine only if a conservative
 *    static check passes: no quantifier on a group that itself repeats or alternates (`(a+)+`,
 *    `(a|ab)*`), no backreferences. The rest is refused when the gate is saved, with the reason.
 *
 * Either way patterns are at most MAX_PATTERN_LENGTH characters. docs/flow.md lists the limits.
 */

export const MAX_PATTERN_LENGTH = 512;

function enableLinearEngine(): boolean {
  try {
    setFlagsFromString('--enable-experimental-regexp-engine');
    new RegExp('a', 'l');
    return true;
  } catch {
    return false;
  }
}

/** Which engine user patterns run on in this process. */
export const REGEX_ENGINE: 'linear' | 'backtracking' = enableLinearEngine() ? 'linear' : 'backtracking';

export type SafeRegexResult = { ok: true; regex: RegExp } | { ok: false; reason: string };

/** Compiles a user pattern (no flags), or says why it is refused. */
export function compileSafeRegex(pattern: string): SafeRegexResult {
  if (typeof pattern !== 'string') return { ok: false, reason: 'pattern must be a string' };
  if (pattern.length > MAX_PATTERN_LENGTH) return { ok: false, reason: `pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  try {
    new RegExp(pattern);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  return safeRegExp(pattern, '');
}

/**
 * The linear engine when it takes the pattern; otherwise the backtracking engine, but only for a
 * pattern the static check finds free of nested repetition (lookaheads and the `i` flag land here).
 */
function safeRegExp(source: string, flags: string): SafeRegexResult {
  if (REGEX_ENGINE === 'linear') {
    try {
      return { ok: true, regex: new RegExp(source, `${flags}l`) };
    } catch {
      // not runnable in linear time: judged by the static check below
    }
  }
  const risky = staticRisk(source);
  return risky ? { ok: false, reason: risky } : { ok: true, regex: new RegExp(source, flags) };
}

/**
 * A RegexEngine for JSONata (its `/…/i` literals and `$match`/`$replace` arguments): the same
 * guard, so a rule cannot smuggle a catastrophic pattern past the definition check.
 */
export const JsonataSafeRegex = function SafeRegex(re: RegExp): RegExp {
  const compiled = safeRegExp(re.source, re.flags);
  if (!compiled.ok) throw new Error(`regular expression refused: ${compiled.reason}`);
  return compiled.regex;
} as unknown as RegExpConstructor;

/**
 * The fallback check: walks the pattern tracking, per open group, whether it contains a
 * quantifier or an alternation; a quantifier right after such a group is refused.
 */
export function staticRisk(pattern: string): string | undefined {
  if (/\\[1-9]|\\k</.test(pattern)) return 'backreferences are not supported';
  const stack: Array<{ repeats: boolean; alternates: boolean }> = [{ repeats: false, alternates: false }];
  let closed: { repeats: boolean; alternates: boolean } | undefined;
  let inClass = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i];
    if (c === '\\') {
      i += 1;
      closed = undefined;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    const quantifier = c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i)));
    if (quantifier) {
      const fixed = c === '{' && /^\{(\d+)\}/.test(pattern.slice(i));
      if (closed && (closed.repeats || closed.alternates) && c !== '?' && !fixed) {
        return 'nested repetition (a repeated group that itself repeats or alternates) can take exponential time';
      }
      if (!fixed && c !== '?') stack[stack.length - 1].repeats = true;
      if (c === '{') i = pattern.indexOf('}', i);
      closed = undefined;
      continue;
    }
    closed = undefined;
    if (c === '[') inClass = true;
    else if (c === '(') stack.push({ repeats: false, alternates: false });
    else if (c === '|') stack[stack.length - 1].alternates = true;
    else if (c === ')' && stack.length > 1) {
      closed = stack.pop()!;
      const parent = stack[stack.length - 1];
      parent.repeats ||= closed.repeats;
    }
  }
  return undefined;
}
