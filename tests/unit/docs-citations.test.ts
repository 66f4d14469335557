import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Comments, tests and docs cite decisions by a heading of docs/ (`docs/reporting.md "Channels"`,
 * `docs/flow.md, "Limits"`), never a document outside the repository. A citation must stay true: the
 * doc exists and has the heading. A heading counts when it is written as cited, when it starts with
 * the cited words followed by its parenthesis, colon or dash ("Starting workflows" for "Starting
 * workflows (the outbox)"), or when it is a bold paragraph label (`**Secret modes**`).
 */

const ROOT = join(__dirname, '../..');
// packages/ and adapters/ are checked once they exist.
const DIRS = ['api', 'workflows', 'activities', 'worker', 'db', 'domain', 'platform', 'agent', 'scripts', 'web/src', 'tests', 'docs', 'packages', 'adapters'];
// Dependencies, build output and recorded histories hold no citations of ours.
const SKIP = /^(?:node_modules|dist|fixtures)$/;
const TEXT = /\.(ts|tsx|js|mjs|cjs|md|sh|sql|ya?ml)$/;

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (SKIP.test(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (TEXT.test(name)) yield path;
  }
}

const sources = DIRS.map((d) => join(ROOT, d))
  .filter((d) => existsSync(d))
  .flatMap((d) => [...files(d)])
  .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** A comment's line break, `\n * `, `\n// ` or a markdown one, inside a citation. */
const BREAK = String.raw`[ \t]*\n[ \t]*(?:\*(?!/)|//|#)?[ \t]*`;
/** A quoted heading, perhaps wrapped onto the comment's next line. */
const QUOTED = String.raw`"((?:[^"\n]|${BREAK})+?)"`;
const CITATION = new RegExp(String.raw`docs/([\w.-]+)\.md,?(?:[ \t]+|${BREAK})${QUOTED}((?:,(?:[ \t]*|${BREAK})${QUOTED.replace('(', '(?:')})*)`, 'g');

function headingsOf(doc: string): Set<string> {
  const found = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(join(ROOT, 'docs', `${doc}.md`), 'utf8').split('\n')) {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*$/.exec(line);
    if (heading) found.add(heading[1]).add(heading[1].replace(/`/g, ''));
    for (const bold of line.matchAll(/\*\*([^*\n]+?)\*\*/g)) {
      const label = bold[1].trim().replace(/[.:]+$/, '').trim();
      found.add(label).add(label.replace(/`/g, ''));
    }
  }
  return found;
}

const headingCache = new Map<string, Set<string>>();
function hasHeading(doc: string, cited: string): boolean {
  if (!headingCache.has(doc)) headingCache.set(doc, headingsOf(doc));
  for (const heading of headingCache.get(doc)!) {
    if (heading === cited) return true;
    if (heading.startsWith(cited) && /^\s*[(:,—-]/.test(heading.slice(cited.length))) return true;
  }
  return false;
}

describe('citations of decisions', () => {
  it('cites the docs, never the design document outside the repository', () => {
    const pattern = /\bdesign(?:\s|\*|\/\/|#)+B\d|(?<![\w.])B5\.\d{1,2}(?!\.?\d)/g;
    const found = sources.flatMap(({ path, text }) => [...text.matchAll(pattern)].map((m) => `${path}:${lineOf(text, m.index)}: ${m[0].replace(/\s+/g, ' ')}`));
    expect(found).toEqual([]);
  });

  it('cites only headings that exist in their doc', () => {
    const broken: string[] = [];
    for (const { path, text } of sources) {
      for (const m of text.matchAll(CITATION)) {
        const doc = m[1];
        const cited = [m[2], ...[...(m[3] ?? '').matchAll(new RegExp(QUOTED, 'g'))].map((q) => q[1])].map((h) => h.replace(new RegExp(BREAK, 'g'), ' ').trim());
        const where = `${path}:${lineOf(text, m.index)}`;
        if (!existsSync(join(ROOT, 'docs', `${doc}.md`))) broken.push(`${where}: docs/${doc}.md does not exist`);
        else for (const heading of cited) if (!hasHeading(doc, heading)) broken.push(`${where}: docs/${doc}.md has no heading "${heading}"`);
      }
    }
    expect(broken).toEqual([]);
  });
});
