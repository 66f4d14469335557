import { AppError } from '../errors';
import type { CompiledQuery } from './query-runner';
import { BUILT_IN_PARAMETERS, type ParameterDef, type ParameterValue } from './parameters';

/**
 * Query text (docs/reporting.md "Query text"): one hand-written scanner per dialect that
 * knows literals, quoted identifiers, dollar quotes and comments; `{{ name }}` placeholders compiled to
 * bind parameters (`$n` for postgres, `?` for mysql) and `[[ ... ]]` optional clauses; the statement
 * rules that keep a saved query a single read. Every pass is linear in the text: no backtracking
 * pattern ever runs over it. The rules are a guard rail giving clear errors; the database's read-only
 * transaction and a SELECT-only user are the real guarantee.
 */

/**
 * `sqlite` runs only through an agent (docs/reporting.md "Datasource kinds"): `?` markers, `"…"` and `` `…` ``
 * identifiers, no backslash escapes.
 */
export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

export type QueryIssueCode =
  | 'EMPTY_QUERY'
  | 'TEXT_TOO_LONG'
  | 'UNTERMINATED'
  | 'INVALID_PLACEHOLDER'
  | 'PLACEHOLDER_IN_LITERAL'
  | 'UNKNOWN_PARAMETER'
  | 'BIND_MARKER'
  | 'NESTED_OPTIONAL'
  | 'UNCLOSED_OPTIONAL'
  | 'OPTIONAL_WITHOUT_PARAMETER'
  | 'EXECUTABLE_COMMENT'
  | 'MULTIPLE_STATEMENTS'
  | 'NOT_A_READ';

export interface QueryIssue {
  path: string;
  code: QueryIssueCode;
  message: string;
}

export const MAX_QUERY_TEXT = 100_000;
/** Problems reported for one text; the rest would repeat them. */
const MAX_ISSUES = 50;

type TokenKind =
  | 'space'
  | 'word'
  | 'number'
  | 'punct'
  | 'semicolon'
  | 'string'
  | 'quoted'
  | 'comment'
  | 'placeholder'
  | 'optionalOpen'
  | 'optionalClose'
  | 'bindMarker';

interface Token {
  kind: TokenKind;
  start: number;
  end: number;
  /** placeholder: the parameter's name. */
  name?: string;
}

interface Scan {
  tokens: Token[];
  /** Problems found while scanning, with the offset they are at. */
  problems: Array<{ at: number; code: QueryIssueCode; message: string }>;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
/** Identifier characters: ASCII letters, `_`, and every non-ASCII character (both dialects accept them). */
const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 128;
/** Inside an identifier: also digits and `$` (postgres `a$b`; mysql allows `$` too). */
const isIdentPart = (c: number) => isIdentStart(c) || isDigit(c) || c === 36;
const isAsciiIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isAsciiIdentPart = (c: number) => isAsciiIdentStart(c) || isDigit(c);

/**
 * A `{{ name }}` at `i` (which holds `{{`): its name and end, or undefined. Scans only spaces and
 * identifier characters after the braces, so a run of failed attempts never rescans text.
 */
function placeholderAt(text: string, i: number, limit: number): { name: string; end: number } | undefined {
  let j = i + 2;
  while (j < limit && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9)) j += 1;
  const nameStart = j;
  if (j >= limit || !isAsciiIdentStart(text.charCodeAt(j))) return undefined;
  while (j < limit && isAsciiIdentPart(text.charCodeAt(j))) j += 1;
  const nameEnd = j;
  while (j < limit && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9)) j += 1;
  if (j + 1 >= limit || text.charCodeAt(j) !== 125 || text.charCodeAt(j + 1) !== 125) return undefined;
  return { name: text.slice(nameStart, nameEnd), end: j + 2 };
}

/** The first `{{ name }}` between `start` and `end` (a literal's or comment's span), or -1. */
function placeholderInside(text: string, start: number, end: number): number {
  let i = text.indexOf('{{', start);
  while (i !== -1 && i + 1 < end) {
    if (placeholderAt(text, i, end)) return i;
    i = text.indexOf('{{', i + 2);
  }
  return -1;
}

/** End of a quoted span opened at `i` by `quote`: doubled quotes always escape; `backslash` escapes too. -1 when unterminated. */
function quotedEnd(text: string, i: number, quote: number, backslash: boolean): number {
  let j = i + 1;
  const n = text.length;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (backslash && c === 92) {
      j += 2;
    } else if (c === quote) {
      if (j + 1 < n && text.charCodeAt(j + 1) === quote) j += 2;
      else return j + 1;
    } else {
      j += 1;
    }
  }
  return -1;
}

/** End of a block comment opened at `i` (slash-star to star-slash); postgres nests them. -1 when unterminated. */
function blockCommentEnd(text: string, i: number, nested: boolean): number {
  let depth = 1;
  let j = i + 2;
  const n = text.length;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === 42 && j + 1 < n && text.charCodeAt(j + 1) === 47) {
      depth -= 1;
      j += 2;
      if (depth === 0 || !nested) return j;
    } else if (nested && c === 47 && j + 1 < n && text.charCodeAt(j + 1) === 42) {
      depth += 1;
      j += 2;
    } else {
      j += 1;
    }
  }
  return -1;
}

/** The tokens of a query text; problems of the text itself (unterminated spans, bad placeholders, nesting). */
function scan(text: string, dialect: SqlDialect): Scan {
  const tokens: Token[] = [];
  const problems: Scan['problems'] = [];
  const pg = dialect === 'postgres';
  const my = dialect === 'mysql';
  const n = text.length;
  let optionalOpen = false;
  let i = 0;
  const push = (kind: TokenKind, start: number, end: number, name?: string) => {
    tokens.push(name === undefined ? { kind, start, end } : { kind, start, end, name });
    i = end;
  };
  /** A literal, quoted identifier or comment from `start` to `end` (-1: unterminated, to the end of the text). */
  const span = (kind: 'string' | 'quoted' | 'comment', start: number, end: number, what: string) => {
    if (end === -1) {
      problems.push({ at: start, code: 'UNTERMINATED', message: `Unterminated ${what}` });
      end = n;
    }
    const inside = placeholderInside(text, start, end);
    if (inside !== -1) {
      problems.push({ at: inside, code: 'PLACEHOLDER_IN_LITERAL', message: `A placeholder inside a ${what} is not a parameter; move it out` });
    }
    push(kind, start, end);
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
    if (isSpace(c)) {
      let j = i + 1;
      while (j < n && isSpace(text.charCodeAt(j))) j += 1;
      push('space', i, j);
    } else if (c === 39) {
      // '...': postgres E'...' (the word E right before) and every mysql string take backslash escapes; sqlite's never do.
      const prev = tokens[tokens.length - 1];
      const escape = my || (prev?.kind === 'word' && prev.end === i && prev.end - prev.start === 1 && (text[prev.start] === 'E' || text[prev.start] === 'e'));
      span('string', i, quotedEnd(text, i, 39, escape), 'string literal');
    } else if (c === 34) {
      if (!my) span('quoted', i, quotedEnd(text, i, 34, false), 'quoted identifier');
      else span('string', i, quotedEnd(text, i, 34, true), 'string literal');
    } else if (c === 96 && !pg) {
      span('quoted', i, quotedEnd(text, i, 96, false), 'quoted identifier');
    } else if (c === 45 && next === 45 && (!my || i + 2 >= n || text.charCodeAt(i + 2) <= 32)) {
      // mysql: `--` starts a comment only when a space or control character follows.
      const nl = text.indexOf('\n', i);
      span('comment', i, nl === -1 ? n : nl, 'comment');
    } else if (c === 35 && my) {
      const nl = text.indexOf('\n', i);
      span('comment', i, nl === -1 ? n : nl, 'comment');
    } else if (c === 47 && next === 42) {
      if (my && i + 2 < n && (text[i + 2] === '!' || (text[i + 2] === 'M' && text[i + 3] === '!'))) {
        problems.push({ at: i, code: 'EXECUTABLE_COMMENT', message: 'MySQL executable comments (/*! ... */) run their text; write it as plain SQL' });
      }
      span('comment', i, blockCommentEnd(text, i, pg), 'comment');
    } else if (pg && c === 36) {
      // $1: a bind marker; $tag$ ... $tag$ (tag may be empty): a dollar-quoted string; else a lone $.
      if (isDigit(next)) {
        let j = i + 1;
        while (j < n && isDigit(text.charCodeAt(j))) j += 1;
        push('bindMarker', i, j);
        continue;
      }
      let j = i + 1;
      if (isIdentStart(next)) {
        j += 1;
        while (j < n && (isIdentStart(text.charCodeAt(j)) || isDigit(text.charCodeAt(j)))) j += 1;
      }
      if (j < n && text.charCodeAt(j) === 36) {
        const tag = text.slice(i, j + 1);
        const close = text.indexOf(tag, j + 1);
        span('string', i, close === -1 ? -1 : close + tag.length, 'dollar-quoted string');
      } else {
        push('punct', i, i + 1);
      }
    } else if (c === 63 && !pg) {
      push('bindMarker', i, i + 1);
    } else if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(text.charCodeAt(j))) j += 1;
      push('word', i, j);
    } else if (isDigit(c)) {
      let j = i + 1;
      while (j < n && (isIdentPart(text.charCodeAt(j)) || text.charCodeAt(j) === 46)) j += 1;
      push('number', i, j);
    } else if (c === 123 && next === 123) {
      const p = placeholderAt(text, i, n);
      if (p) {
        push('placeholder', i, p.end, p.name);
      } else {
        problems.push({ at: i, code: 'INVALID_PLACEHOLDER', message: 'A placeholder is {{ name }} with a parameter name (letters, digits, _)' });
        push('punct', i, i + 2);
      }
    } else if (c === 91 && next === 91) {
      if (optionalOpen) problems.push({ at: i, code: 'NESTED_OPTIONAL', message: 'Optional clauses [[ ... ]] cannot be nested' });
      optionalOpen = true;
      push('optionalOpen', i, i + 2);
    } else if (c === 93 && next === 93 && optionalOpen) {
      optionalOpen = false;
      push('optionalClose', i, i + 2);
    } else if (c === 59) {
      push('semicolon', i, i + 1);
    } else {
      push('punct', i, i + 1);
    }
  }
  if (optionalOpen) problems.push({ at: n, code: 'UNCLOSED_OPTIONAL', message: 'An optional clause [[ is not closed with ]]' });
  return { tokens, problems };
}

const READ_STARTS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW', 'EXPLAIN', 'DESCRIBE']);
/** Refused anywhere outside literals: writes (writable CTEs, FOR UPDATE) and SELECT ... INTO (tables, files, variables). */
const WRITE_WORDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'INTO']);

const isSignificant = (t: Token) => t.kind !== 'space' && t.kind !== 'comment';

/** NOT_A_READ and MULTIPLE_STATEMENTS problems of the scanned text. */
function statementProblems(text: string, tokens: Token[]): Scan['problems'] {
  const problems: Scan['problems'] = [];
  const statements: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'semicolon') statements.push([]);
    else if (isSignificant(t)) statements[statements.length - 1].push(t);
  }
  const nonEmpty = statements.filter((s) => s.length > 0);
  if (nonEmpty.length === 0) {
    problems.push({ at: 0, code: 'EMPTY_QUERY', message: 'The query has no statement' });
    return problems;
  }
  if (nonEmpty.length > 1) {
    problems.push({ at: nonEmpty[1][0].start, code: 'MULTIPLE_STATEMENTS', message: 'Only one statement may run; a ; may only end it' });
  }
  const word = (t: Token) => (t.kind === 'word' ? text.slice(t.start, t.end).toUpperCase() : '');
  for (const statement of nonEmpty) {
    const notRead = (t: Token, message: string) => problems.push({ at: t.start, code: 'NOT_A_READ', message });
    const first = statement.find((t) => !(t.kind === 'punct' && text[t.start] === '('));
    const keyword = first ? word(first) : '';
    if (!first || !READ_STARTS.has(keyword)) {
      notRead(first ?? statement[0], `Only reads may run: a query starts with ${[...READ_STARTS].join(', ')}`);
      continue;
    }
    const explains = keyword === 'EXPLAIN' || keyword === 'DESCRIBE';
    for (let k = 0; k < statement.length; k += 1) {
      const t = statement[k];
      const w = word(t);
      if (WRITE_WORDS.has(w)) {
        notRead(t, w === 'INTO' ? 'SELECT ... INTO writes a table, file or variable' : `${w} is not a read`);
        break;
      }
      // MERGE is not reserved everywhere: refused where a (writable CTE) body starts.
      const before = statement[k - 1];
      if (w === 'MERGE' && before?.kind === 'punct' && text[before.start] === '(') {
        notRead(t, 'MERGE is not a read');
        break;
      }
      if (explains && (w === 'ANALYZE' || w === 'ANALYSE')) {
        notRead(t, 'EXPLAIN ANALYZE runs the statement; use EXPLAIN alone');
        break;
      }
    }
  }
  return problems;
}

/** Line and column (1-based) of an offset, for messages. */
function position(text: string, lineStarts: number[], at: number): string {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= at) lo = mid;
    else hi = mid - 1;
  }
  return `line ${lo + 1}, column ${at - lineStarts[lo] + 1}`;
}

interface Analysis {
  scan: Scan;
  issues: QueryIssue[];
}

function analyse(text: string, dialect: SqlDialect, parameterDefs: readonly ParameterDef[]): Analysis {
  if (text.length > MAX_QUERY_TEXT) {
    return {
      scan: { tokens: [], problems: [] },
      issues: [{ path: 'text', code: 'TEXT_TOO_LONG', message: `The query text is longer than ${MAX_QUERY_TEXT} characters` }],
    };
  }
  const s = scan(text, dialect);
  const problems = [...s.problems];
  const known = new Set([...parameterDefs.map((d) => d.name), ...BUILT_IN_PARAMETERS]);
  let clauseStart = -1;
  let clauseHasPlaceholder = false;
  for (const t of s.tokens) {
    if (t.kind === 'placeholder') {
      clauseHasPlaceholder = true;
      if (!known.has(t.name!)) problems.push({ at: t.start, code: 'UNKNOWN_PARAMETER', message: `Unknown parameter '${t.name!}'` });
    } else if (t.kind === 'bindMarker') {
      problems.push({ at: t.start, code: 'BIND_MARKER', message: `Write parameters as {{ name }}, not ${text.slice(t.start, t.end)}` });
    } else if (t.kind === 'optionalOpen') {
      clauseStart = t.start;
      clauseHasPlaceholder = false;
    } else if (t.kind === 'optionalClose') {
      if (!clauseHasPlaceholder) {
        problems.push({ at: clauseStart, code: 'OPTIONAL_WITHOUT_PARAMETER', message: 'An optional clause [[ ... ]] needs a {{ parameter }} deciding whether it is kept' });
      }
    }
  }
  problems.push(...statementProblems(text, s.tokens));
  problems.sort((a, b) => a.at - b.at);
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const issues = problems.slice(0, MAX_ISSUES).map((p) => ({ path: 'text', code: p.code, message: `${p.message} (${position(text, lineStarts, p.at)})` }));
  return { scan: s, issues };
}

/** The names of the text's `{{ name }}` placeholders, each once, in the order they first appear (POST /queries/validate). */
export function queryPlaceholderNames(text: string, dialect: SqlDialect): string[] {
  if (text.length > MAX_QUERY_TEXT) return [];
  return [...new Set(scan(text, dialect).tokens.filter((t) => t.kind === 'placeholder').map((t) => t.name!))];
}

/** Every problem of a query text (for ERR_QRY_002 when saving): scanning, placeholders, statement rules. */
export function checkQueryText(text: string, dialect: SqlDialect, parameterDefs: readonly ParameterDef[]): QueryIssue[] {
  return analyse(text, dialect, parameterDefs).issues;
}

/**
 * Whether two characters written next to each other read differently than apart: one word, a prefixed
 * literal (`E'...'`, `_utf8'...'`), a comment's start or end, mysql's `??`.
 */
function fuses(a: number, b: number): boolean {
  if (isIdentPart(a) && (isIdentPart(b) || b === 39 || b === 34 || b === 96)) return true;
  return (a === 45 && b === 45) || (a === 47 && b === 42) || (a === 42 && b === 47) || (a === 63 && b === 63);
}

const hasNoValue = (v: ParameterValue | undefined) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);

/**
 * The statement to run: placeholders as bind parameters, optional clauses whose parameters have no
 * value dropped, trailing `;` and comments cut. `values` are coerceParameters' output. Values are
 * never put into the text. Throws ERR_QRY_009 (a statement that is not a read), ERR_QRY_002 (other
 * text problems, `relatedInfo.errors`) or ERR_RPT_007 (a value missing where the text needs one).
 */
export function compileQuery(
  text: string,
  dialect: SqlDialect,
  parameterDefs: readonly ParameterDef[],
  values: Readonly<Record<string, ParameterValue | undefined>>,
): CompiledQuery {
  const { scan: s, issues } = analyse(text, dialect, parameterDefs);
  if (issues.some((i) => i.code === 'NOT_A_READ')) throw new AppError('ERR_QRY_009', undefined, { errors: issues });
  if (issues.length > 0) throw new AppError('ERR_QRY_002', undefined, { errors: issues });
  const defs = new Map(parameterDefs.map((d) => [d.name, d]));
  const valueOf = (name: string) => (Object.prototype.hasOwnProperty.call(values, name) ? values[name] : undefined);

  // Which optional clauses stay: those whose every parameter has a value.
  const dropped = new Set<number>();
  let open = -1;
  let keep = true;
  s.tokens.forEach((t, k) => {
    if (t.kind === 'optionalOpen') {
      open = k;
      keep = true;
    } else if (t.kind === 'placeholder' && open !== -1 && hasNoValue(valueOf(t.name!))) {
      keep = false;
    } else if (t.kind === 'optionalClose') {
      if (!keep) dropped.add(open);
      open = -1;
    }
  });

  // The one statement ends at its last significant token: no ; around it, no trailing comment.
  let last = s.tokens.length - 1;
  while (last >= 0 && (!isSignificant(s.tokens[last]) || s.tokens[last].kind === 'semicolon')) last -= 1;

  const out: string[] = [];
  const bound: unknown[] = [];
  const numbers = new Map<string, string>();
  // Where a marker was put in or text taken out, the neighbours must not fuse into one token: postgres
  // reads `x$1` as an identifier and `$$1` as a dollar quote; `-` and `-` around a dropped clause would
  // start a comment. Such a junction gets a space.
  let junction = false;
  const emit = (piece: string) => {
    const before = out.length > 0 ? out[out.length - 1] : '';
    if (junction && before !== '' && piece !== '' && fuses(before.charCodeAt(before.length - 1), piece.charCodeAt(0))) out.push(' ');
    out.push(piece);
    junction = false;
  };
  let skipping = false;
  for (let k = 0; k <= last; k += 1) {
    const t = s.tokens[k];
    if (t.kind === 'optionalOpen' || t.kind === 'optionalClose') {
      skipping = t.kind === 'optionalOpen' && dropped.has(k);
      junction = true;
      continue;
    }
    if (skipping || t.kind === 'semicolon') continue;
    if (t.kind !== 'placeholder') {
      emit(text.slice(t.start, t.end));
      continue;
    }
    const name = t.name!;
    const def = defs.get(name);
    const value = valueOf(name);
    if (def?.multiple) {
      if (!Array.isArray(value) || value.length === 0) {
        throw new AppError('ERR_RPT_007', `Parameter '${name}' needs at least one value here`, { field: name });
      }
    } else if (Array.isArray(value)) {
      throw new AppError('ERR_RPT_007', `Parameter '${name}' takes one value`, { field: name });
    } else if (value === undefined || value === null) {
      if (def?.required || !def) throw new AppError('ERR_RPT_007', `Parameter '${name}' is required`, { field: name });
    }
    const items: unknown[] = Array.isArray(value) ? value : [value ?? null];
    let markers: string;
    if (dialect !== 'postgres') {
      markers = items.map(() => '?').join(', ');
      bound.push(...items);
    } else {
      markers = numbers.get(name) ?? items.map((item) => `$${bound.push(item)}`).join(', ');
      numbers.set(name, markers);
    }
    junction = true;
    emit(markers);
    junction = true;
  }
  return { text: out.join('').trim(), values: bound };
}
