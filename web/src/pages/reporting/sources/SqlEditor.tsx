import { type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { MySQL, PostgreSQL, SQLite, sql, type SQLNamespace } from '@codemirror/lang-sql';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorState, StateEffect, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import { cspNonce } from '../../../csp';
import type { DiscoveredSchema, Problem } from './shared';

/**
 * The SQL editor (docs/web.md "Reporting: datasources and queries"): CodeMirror 6 with the SQL
 * language of the datasource's dialect, completion of keywords, the discovered schema's schemas,
 * tables and (after `table.`) columns from @codemirror/lang-sql, plus every column name anywhere;
 * the API's problems with the text marked at the line and column their messages end with.
 */

export interface SqlEditorHandle {
  /** Puts `text` where the cursor is (a column picked in the schema tree) and gives the editor the focus. */
  insert(text: string): void;
}

const DIALECTS = { postgres: PostgreSQL, mysql: MySQL, sqlite: SQLite } as const;

/** The schema as lang-sql's namespace: `{schema: {table: [columns]}}`, each column with its type. */
function namespaceOf(schema: DiscoveredSchema | undefined): SQLNamespace {
  const namespace: Record<string, Record<string, Completion[]>> = {};
  for (const t of schema?.tables ?? []) {
    namespace[t.schema] ??= {};
    namespace[t.schema][t.name] = t.columns.map((c) => ({ label: c.name, type: 'property', detail: c.dataType }));
  }
  return namespace;
}

/** Column names wherever a word is typed (lang-sql offers them only after `table.`), each with its table and type. */
function columnSource(schema: DiscoveredSchema | undefined) {
  const options: Completion[] = [];
  const seen = new Set<string>();
  for (const t of schema?.tables ?? []) {
    for (const c of t.columns) {
      if (seen.has(c.name)) continue;
      seen.add(c.name);
      options.push({ label: c.name, type: 'property', detail: `${t.name} · ${c.dataType}` });
    }
  }
  return (context: CompletionContext): CompletionResult | null => {
    const word = context.matchBefore(/[\w$]+/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    // After a dot lang-sql's schema completion knows the table's own columns.
    if (context.state.sliceDoc(word.from - 1, word.from) === '.') return null;
    return { from: word.from, options, validFor: /^[\w$]*$/ };
  };
}

/** Where "(line 3, column 14)" at the end of a message points, as an offset. */
function offsetOf(state: EditorState, message: string): number | undefined {
  const found = /line (\d+), column (\d+)\)?\s*$/.exec(message);
  if (!found) return undefined;
  const lineNo = Number(found[1]);
  if (lineNo < 1 || lineNo > state.doc.lines) return undefined;
  const line = state.doc.line(lineNo);
  return Math.min(line.from + Number(found[2]) - 1, line.to);
}

const problemsChanged = StateEffect.define<null>();

export const SqlEditor = forwardRef<SqlEditorHandle, { label: string; text: string; onText: (text: string) => void; dialect: 'postgres' | 'mysql' | 'sqlite' | undefined; schema: DiscoveredSchema | undefined; problems: Problem[]; readOnly?: boolean }>(function SqlEditor(
  { label, text, onText, dialect, schema, problems, readOnly = false },
  ref,
) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>(undefined);
  const latest = useRef({ onText, problems });
  latest.current = { onText, problems };

  useImperativeHandle(ref, () => ({
    insert(insertion: string) {
      const v = view.current;
      if (!v) return;
      const { from, to } = v.state.selection.main;
      v.dispatch({ changes: { from, to, insert: insertion }, selection: { anchor: from + insertion.length }, userEvent: 'input.paste' });
      v.focus();
    },
  }));

  useEffect(() => {
    const language = sql({ dialect: DIALECTS[dialect ?? 'postgres'], schema: namespaceOf(schema), defaultSchema: dialect === 'postgres' || !dialect ? 'public' : undefined, upperCaseKeywords: true });
    const apiProblems = linter(
      (v) =>
        latest.current.problems.map((p): Diagnostic => {
          const at = offsetOf(v.state, p.message);
          const from = at ?? 0;
          const to = at === undefined ? v.state.doc.length : Math.min(v.state.doc.lineAt(from).to, from + 1);
          return { from, to, severity: 'error', message: p.code ? `${p.code}: ${p.message}` : p.message, source: 'Formwork' };
        }),
      { needsRefresh: (update) => update.transactions.some((t) => t.effects.some((e) => e.is(problemsChanged))), delay: 0 },
    );
    const extensions: Extension[] = [
      basicSetup,
      language,
      language.language.data.of({ autocomplete: columnSource(schema) }),
      apiProblems,
      lintGutter(),
      EditorView.cspNonce.of(cspNonce),
      EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true' }),
      EditorView.lineWrapping,
      EditorState.readOnly.of(readOnly),
      EditorView.theme({ '&': { border: '1px solid var(--mantine-color-default-border)', borderRadius: '4px' }, '.cm-scroller': { minHeight: '120px', maxHeight: '420px' } }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) latest.current.onText(update.state.doc.toString());
      }),
    ];
    const created = new EditorView({ parent: host.current!, state: EditorState.create({ doc: view.current?.state.doc.toString() ?? text, extensions }) });
    view.current = created;
    return () => created.destroy();
    // Made again when the dialect or schema changes (the text carries over); the text follows below.
  }, [dialect, schema, readOnly, label]);

  // A text from elsewhere (the query loaded, a version restored): shown unless it is what the editor holds.
  useEffect(() => {
    const v = view.current;
    if (!v || v.state.doc.toString() === text) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
  }, [text]);

  useEffect(() => {
    view.current?.dispatch({ effects: problemsChanged.of(null) });
  }, [problems]);

  return <div ref={host} />;
});
