import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../api/openapi/operations';

/**
 * The examples in docs/ stay true to the API (docs/openapi.md "Examples in the docs are checked"):
 *
 * - every `curl` in a sh/bash block names an operation of the OpenAPI document (method and path; `$VAR`
 *   and `…` segments stand for path parameters), and its JSON body (`-d '…'`) is one the operation's
 *   request schema accepts;
 * - a ```json block right after a `<!-- example: response METHOD /path STATUS -->` (or
 *   `<!-- example: request METHOD /path -->`) comment is an answer (or a body) that operation's schema
 *   accepts. A trailing `partial` lets the example leave out required fields.
 *
 * Elisions are allowed where a value is not the point: a string holding `…` passes any format,
 * pattern or enum (`"id": "5b0f…"`). Everything else is checked as the service's own answer checks
 * are (tests/support/openapi-answers.ts): a renamed or removed field, a wrong type, a field the
 * schema does not know, fail here.
 */

/** The pages whose examples are checked. */
const DOCS = ['webhooks.md', 'documents.md', 'reporting.md', 'flow.md', 'templates.md', 'identity.md', 'errors.md', 'idempotency.md', 'oauth.md', 'embedding.md', 'agent.md', 'mcp.md', 'openapi.md', 'security.md', 'operations.md', 'web.md'];
/** Those that show request bodies and annotated answers: the check must find some there (its parser found nothing otherwise). */
const WITH_EXAMPLES = new Set(['webhooks.md', 'documents.md', 'reporting.md']);
const ROOT = join(__dirname, '..', '..');

type Schema = Record<string, unknown>;
interface Operation {
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

const doc = JSON.parse(
  JSON.stringify(openApiDocument({ serverUrl: 'https://formwork.example', batchMaxDocuments: 5000 })).replaceAll('"#/components/schemas/', '"doc#/$defs/'),
) as Doc;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema({ $id: 'doc', $defs: doc.components.schemas });

interface Block {
  file: string;
  line: number;
  lang: string;
  text: string;
  /** The `<!-- example: … -->` comment right before the block, if any. */
  note?: string;
}

function blocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, 'docs', file), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed code block`);
    const before = lines.slice(0, i).reverse().find((l) => l.trim() !== '');
    const note = before && /^<!--\s*example:\s*(.*?)\s*-->$/.exec(before.trim())?.[1];
    out.push({ file, line: i + 1, lang: open[1], text: lines.slice(i + 1, end).join('\n'), ...(note ? { note } : {}) });
    i = end;
  }
  return out;
}

/** The OpenAPI path a concrete path is an instance of: literal segments equal, `{param}` any segment; the most literal match wins. */
function operationPath(method: string, path: string): string | undefined {
  const segments = path.split('/');
  let best: { path: string; literal: number } | undefined;
  for (const [candidate, methods] of Object.entries(doc.paths)) {
    if (!methods[method]) continue;
    const parts = candidate.split('/');
    if (parts.length !== segments.length) continue;
    let literal = 0;
    const fits = parts.every((p, i) => {
      if (/^\{.+\}$/.test(p)) return segments[i] !== '';
      if (p === segments[i]) literal += 1;
      return p === segments[i];
    });
    if (fits && (!best || literal > best.literal)) best = { path: candidate, literal };
  }
  return best?.path;
}

/** The shell commands of a block that run curl: continuation lines joined, quoted spans kept whole (they may hold newlines). */
function curlCommands(text: string): string[] {
  const commands: string[] = [];
  let current = '';
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    // A comment line (its apostrophes are not quotes).
    if (quote === null && c === '#' && current.trim() === '') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end - 1;
      continue;
    }
    if (quote === '"' && c === '\\' && i + 1 < text.length) {
      current += c + text[i + 1];
      i += 1;
      continue;
    }
    if (quote === null && (c === "'" || c === '"')) quote = c;
    else if (c === quote) quote = null;
    if (quote === null && c === '\\' && text[i + 1] === '\n') {
      i += 1;
      current += ' ';
      continue;
    }
    if (quote === null && c === '\n') {
      commands.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  commands.push(current);
  return commands.flatMap((c) => {
    if (/^\s*#/.test(c)) return [];
    const at = c.search(/\bcurl\s/);
    return at < 0 ? [] : [c.slice(at)];
  });
}

/**
 * A command's shell words: quotes removed, `\"` inside double quotes unescaped, and each expansion
 * (`$VAR`, `${VAR}`, `$(…)`) written as `…` (a value the example leaves to the reader). Stops at a pipe
 * or the `)` closing the command substitution the curl is in.
 */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let i = 0;
  const expansion = (): void => {
    // At a `$`: skip the name, braces or parenthesised command.
    i += 1;
    if (command[i] === '(' || command[i] === '{') {
      const open = command[i];
      const close = open === '(' ? ')' : '}';
      let depth = 0;
      for (; i < command.length; i += 1) {
        if (command[i] === open) depth += 1;
        if (command[i] === close) {
          depth -= 1;
          if (depth === 0) {
            i += 1;
            return;
          }
        }
      }
      return;
    }
    while (i < command.length && /[A-Za-z0-9_]/.test(command[i])) i += 1;
  };
  while (i < command.length) {
    while (i < command.length && /\s/.test(command[i])) i += 1;
    if (i >= command.length || command[i] === '|' || command[i] === ')') break;
    let word = '';
    while (i < command.length && !/\s/.test(command[i]) && command[i] !== '|' && command[i] !== ')') {
      const c = command[i];
      if (c === "'") {
        const close = command.indexOf("'", i + 1);
        const to = close < 0 ? command.length : close;
        word += command.slice(i + 1, to);
        i = to + 1;
      } else if (c === '"') {
        i += 1;
        while (i < command.length && command[i] !== '"') {
          if (command[i] === '\\' && i + 1 < command.length) {
            word += command[i + 1];
            i += 2;
          } else if (command[i] === '$') {
            expansion();
            word += '…';
          } else {
            word += command[i];
            i += 1;
          }
        }
        i += 1;
      } else if (c === '$') {
        expansion();
        word += '…';
      } else {
        word += c;
        i += 1;
      }
    }
    words.push(word);
  }
  return words;
}

interface Curl {
  method: string;
  path: string;
  /** The `-d` body as the shell passes it (expansions as `…`). */
  body?: string;
  multipart: boolean;
  /** The `-H content-type: …` given, lower case, without parameters. */
  contentType?: string;
}

function parseCurl(command: string): Curl | undefined {
  const words = shellWords(command);
  let method: string | undefined;
  let body: string | undefined;
  let multipart = false;
  let path: string | undefined;
  let contentType: string | undefined;
  for (let w = 1; w < words.length; w += 1) {
    const word = words[w];
    if (word === '-X' || word === '--request') method = words[++w];
    else if ((word === '-H' || word === '--header') && /^content-type:/i.test(words[w + 1] ?? '')) contentType = words[++w].replace(/^content-type:\s*/i, '').split(';')[0].trim().toLowerCase();
    else if (['-d', '--data', '--data-raw', '--data-binary'].includes(word)) body = words[++w];
    else if (word === '-F' || word === '--form') {
      multipart = true;
      w += 1;
    } else if (['-H', '--header', '-o', '--output', '-u', '--user', '-w'].includes(word)) w += 1;
    else if (!path) {
      const url = /^(?:https?:\/\/[^/]+|…)?(\/api\/[^?#]*)/.exec(word);
      if (url) path = url[1].replace(/\/+$/, '');
    }
  }
  if (!path) return undefined;
  return { method: (method ?? (body !== undefined || multipart ? 'POST' : 'GET')).toLowerCase(), path, ...(body !== undefined ? { body } : {}), multipart, ...(contentType ? { contentType } : {}) };
}

/**
 * A body as JSON: `…` inside a string is a value left out (kept as text); a bare `…` elides members
 * (`{…}`, `[ … ]`: dropped) or a whole value (`"variables": …`, what `$(…)` expands to: the string
 * `"…"`, which passes any schema). Answers whether anything was elided so.
 */
function parseBody(text: string): { value: unknown; elided: boolean } {
  let out = '';
  let elided = false;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i += 1;
      } else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '…') {
      elided = true;
      // In a value's place (after `:`) the whole value is left out: it stands as the string "…".
      if (/:\s*$/.test(out)) out += '"…"';
    } else out += c;
  }
  // A member list that ended with an elision may keep a trailing comma: `{"a": 1, …}`.
  return { value: JSON.parse(out.replace(/,(\s*[}\]])/g, '$1')), elided };
}

/** A value at an ajv instance path. */
function at(data: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), data);
}

const ELIDABLE = new Set(['format', 'pattern', 'enum', 'const', 'minLength', 'maxLength']);

/** Schema problems of an example, less those an elision (`…`) explains, and missing fields when `partial`. */
function problems(schema: Schema, value: unknown, partial: boolean): string[] {
  const validate = ajv.compile(schema);
  if (validate(value)) return [];
  const errors = validate.errors ?? [];
  const explained = (e: ErrorObject): boolean => {
    const v = at(value, e.instancePath);
    if (v === '…') return true; // a whole value left out
    if (ELIDABLE.has(e.keyword) && typeof v === 'string' && v.includes('…')) return true;
    return partial && (e.keyword === 'required' || e.keyword === 'minItems' || e.keyword === 'minProperties');
  };
  // An anyOf/oneOf passes when one of its branches fails only for what elisions explain; the deepest first.
  const dropped = new Set<ErrorObject>();
  const choices = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const choice of choices) {
    const inside = errors.filter((e) => e.schemaPath.startsWith(`${choice.schemaPath}/`) && !dropped.has(e));
    const branches = new Map<string, ErrorObject[]>();
    for (const e of inside) {
      const branch = e.schemaPath.slice(choice.schemaPath.length + 1).split('/')[0];
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    if ([...branches.values()].some((list) => list.every(explained))) {
      for (const e of inside) dropped.add(e);
      dropped.add(choice);
    }
  }
  return errors
    .filter((e: ErrorObject) => {
      if (dropped.has(e) || explained(e)) return false;
      // anyOf/oneOf report their branches' errors too: the branch errors say what is wrong.
      return e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'if';
    })
    .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
}

const requestSchema = (method: string, path: string) => doc.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
const takesForm = (method: string, path: string) => doc.paths[path]?.[method]?.requestBody?.content?.['application/x-www-form-urlencoded'] !== undefined;
const responseSchema = (method: string, path: string, status: string) => doc.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema;

describe.each(DOCS)('docs/%s examples', (file) => {
  const all = blocks(file);

  it('every curl names an operation of the API, and its JSON body is one the operation accepts', () => {
    const found: string[] = [];
    let bodies = 0;
    for (const block of all.filter((b) => ['sh', 'bash', 'shell', 'console'].includes(b.lang))) {
      for (const command of curlCommands(block.text)) {
        const curl = parseCurl(command);
        if (!curl) continue;
        const where = `${file}:${block.line} ${curl.method.toUpperCase()} ${curl.path}`;
        const path = operationPath(curl.method, curl.path);
        if (!path) {
          found.push(`${where}: no such operation`);
          continue;
        }
        // A body read from a file (`@file`, `@-`) or sent as a form is not shown.
        if (curl.body === undefined || curl.multipart || curl.body.startsWith('@')) continue;
        // `-d` without a content type sends a form: right where the operation takes one (OAuth's token endpoint).
        if (curl.contentType === undefined && takesForm(curl.method, path)) continue;
        // Otherwise a JSON body needs its type said, or the API answers 415 (docs/errors.md "Methods and content types").
        if (!curl.contentType || !/^application\/(.+\+)?json$/.test(curl.contentType)) {
          found.push(`${where}: the body is sent as ${curl.contentType ?? 'a form (curl -d without -H \'content-type: application/json\')'}; the API answers 415`);
          continue;
        }
        let body: { value: unknown; elided: boolean };
        try {
          body = parseBody(curl.body);
        } catch (err) {
          found.push(`${where}: the body is not JSON (${(err as Error).message})`);
          continue;
        }
        const schema = requestSchema(curl.method, path);
        if (!schema) {
          found.push(`${where}: the operation takes no JSON body`);
          continue;
        }
        bodies += 1;
        // An elided body shows some members only: their names and types are checked, not what it leaves out.
        for (const p of problems(schema, body.value, body.elided)) found.push(`${where}: ${p}`);
      }
    }
    expect(found).toEqual([]);
    // The check has something to check: these pages show request bodies.
    if (WITH_EXAMPLES.has(file)) expect(bodies).toBeGreaterThan(0);
  });

  it('every annotated JSON example is what its operation answers or accepts', () => {
    const found: string[] = [];
    const annotated = all.filter((b) => b.note);
    for (const block of annotated) {
      const m = /^(request|response)\s+([A-Z]+)\s+(\S+)(?:\s+(\d{3}))?(\s+partial)?$/.exec(block.note!);
      const where = `${file}:${block.line}`;
      if (!m || (m[1] === 'response' && !m[4])) {
        found.push(`${where}: the note is "example: request METHOD /path" or "example: response METHOD /path STATUS [partial]", not "${block.note}"`);
        continue;
      }
      const [, kind, method, path, status, partial] = m;
      let value: unknown;
      try {
        value = JSON.parse(block.text);
      } catch (err) {
        found.push(`${where}: not JSON (${(err as Error).message})`);
        continue;
      }
      const schema = kind === 'request' ? requestSchema(method.toLowerCase(), path) : responseSchema(method.toLowerCase(), path, status);
      if (!schema) {
        found.push(`${where}: the OpenAPI document has no JSON ${kind} for ${method} ${path}${status ? ` ${status}` : ''}`);
        continue;
      }
      for (const p of problems(schema, value, Boolean(partial))) found.push(`${where} (${method} ${path}): ${p}`);
    }
    expect(found).toEqual([]);
    if (WITH_EXAMPLES.has(file)) expect(annotated.length).toBeGreaterThan(0);
  });
});

describe('the docs examples check', () => {
  it('has teeth: a renamed field, an unknown operation and a wrong body fail it', () => {
    const delivery = {
      id: '3f1c…',
      subscriptionId: '5b0f…',
      url: 'https://erp.example.com/hooks/formwork',
      eventId: 'evt_…_document_generated',
      eventType: 'document.generated',
      status: 'completed',
      attempts: [],
      nextAttemptAt: null,
      payload: {},
      createdAt: '2026-11-21T17:00:03.121Z',
      completedAt: null,
    };
    const schema = responseSchema('get', '/api/webhooks/deliveries/{deliveryId}', '200')!;
    expect(problems(schema, delivery, false)).toEqual([]);
    const { eventType, ...renamed } = delivery;
    expect(problems(schema, { ...renamed, type: eventType }, false)).not.toEqual([]);
    expect(problems(schema, { ...delivery, status: 'sent' }, false)).not.toEqual([]);
    expect(problems(schema, { ...delivery, createdAt: 'yesterday' }, false)).not.toEqual([]);
    expect(operationPath('post', '/api/webhooks/$ID/test')).toBe('/api/webhooks/{id}/test');
    expect(operationPath('post', '/api/reporting/queries/validate')).toBe('/api/reporting/queries/validate');
    expect(operationPath('post', '/api/no-such-thing')).toBeUndefined();
    expect(parseCurl(`curl -s -X POST $URL/api/webhooks -H 'Content-Type: application/json' -d '{"url": 1}'`)).toEqual({ method: 'post', path: '/api/webhooks', body: '{"url": 1}', multipart: false, contentType: 'application/json' });
    expect(parseCurl(`curl -s -X POST "$FW/api/documents/merge" -d '{"parts": [{"jobId": "'$JOB1'"}]}' | jq .`)).toEqual({ method: 'post', path: '/api/documents/merge', body: '{"parts": [{"jobId": "…"}]}', multipart: false });
    expect(parseCurl(`curl -s $URL/api/reporting/queries -d "{\\"name\\":\\"Q\\",\\"datasourceId\\":\\"$DS\\"}"`)?.body).toBe('{"name":"Q","datasourceId":"…"}');
    expect(parseBody('{"variables": {…}, "sections": [ … ], "a": "x…",}')).toEqual({ value: { variables: {}, sections: [], a: 'x…' }, elided: true });
    expect(parseBody('{"variables": …, "b": 1}')).toEqual({ value: { variables: '…', b: 1 }, elided: true });
    expect(problems(requestSchema('post', '/api/webhooks')!, { url: 1 }, false)).not.toEqual([]);
  });
});
