import { autocompletion, closeBrackets, closeBracketsKeymap, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { bracketMatching, StreamLanguage } from '@codemirror/language';
import { linter } from '@codemirror/lint';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, placeholder as placeholderText } from '@codemirror/view';
import { basicSetup, minimalSetup } from 'codemirror';
import { useEffect, useRef } from 'react';
import { cspNonce } from '../../../csp';

/**
 * CodeMirror 6 for the gate pages: JSON (the schema's JSON view, a sample payload) or a JSONata
 * expression (a business rule) with completion of the schema's field paths and JSONata's functions.
 * It follows `text` while it does not have the focus; what is typed goes to `onText`. Its `<style>`
 * elements carry the page's nonce (docs/web.md "What it is built on").
 */

/** JSONata's built-in functions (https://docs.jsonata.org/overview), offered after `$`. */
const JSONATA_FUNCTIONS = [
  'sum', 'count', 'max', 'min', 'average', 'exists', 'string', 'length', 'substring', 'substringBefore', 'substringAfter', 'uppercase', 'lowercase',
  'trim', 'pad', 'contains', 'split', 'join', 'match', 'replace', 'number', 'abs', 'floor', 'ceil', 'round', 'power', 'sqrt', 'boolean', 'not',
  'append', 'sort', 'reverse', 'distinct', 'keys', 'lookup', 'merge', 'type', 'map', 'filter', 'reduce', 'now', 'millis', 'toMillis', 'fromMillis', 'error', 'assert',
];

/** A small JSONata highlighter: strings, numbers, `$functions`, operators, keywords and field names. */
const jsonata = StreamLanguage.define<{ inComment: boolean }>({
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo('*/')) {
        stream.next();
        stream.next();
        state.inComment = false;
      } else stream.skipToEnd();
      return 'comment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('/*')) {
      state.inComment = true;
      return 'comment';
    }
    const quote = stream.peek();
    if (quote === '"' || quote === "'") {
      stream.next();
      let escaped = false;
      for (let c = stream.next(); c !== undefined; c = stream.next()) {
        if (c === quote && !escaped) break;
        escaped = !escaped && c === '\\';
      }
      return 'string';
    }
    if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?/)) return 'number';
    if (stream.match(/^\$[A-Za-z_]\w*/)) return 'variableName.special';
    if (stream.match(/^(and|or|in)\b/)) return 'keyword';
    if (stream.match(/^(true|false|null)\b/)) return 'atom';
    if (stream.match(/^[A-Za-z_]\w*/)) return 'propertyName';
    if (stream.match(/^`[^`]*`/)) return 'propertyName';
    stream.next();
    return 'operator';
  },
});

function completeExpression(paths: () => string[]) {
  return (context: CompletionContext): CompletionResult | null => {
    const fn = context.matchBefore(/\$\w*/);
    if (fn) return { from: fn.from, options: JSONATA_FUNCTIONS.map((f) => ({ label: `$${f}`, type: 'function', apply: `$${f}(` })), validFor: /^\$\w*$/ };
    const word = context.matchBefore(/[A-Za-z_][\w.]*/);
    if (!word && !context.explicit) return null;
    return { from: word ? word.from : context.pos, options: paths().map((p) => ({ label: p, type: 'property' })), validFor: /^[\w.]*$/ };
  };
}

export function CodeEditor({
  text,
  onText,
  label,
  language,
  readOnly,
  fieldPaths,
  minHeight,
  placeholder,
}: {
  text: string;
  onText: (text: string) => void;
  /** The editor's accessible name. */
  label: string;
  language: 'json' | 'jsonata';
  readOnly?: boolean;
  /** Completion for JSONata: the schema's field paths. */
  fieldPaths?: string[];
  minHeight?: number;
  placeholder?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>(undefined);
  const latest = useRef({ onText, fieldPaths: fieldPaths ?? [] });
  latest.current = { onText, fieldPaths: fieldPaths ?? [] };

  useEffect(() => {
    const common: Extension[] = [
      EditorView.cspNonce.of(cspNonce),
      EditorView.contentAttributes.of({ 'aria-label': label }),
      EditorState.readOnly.of(!!readOnly),
      EditorView.editable.of(!readOnly),
      EditorView.updateListener.of((update) => {
        if (update.docChanged && update.transactions.some((t) => t.isUserEvent('input') || t.isUserEvent('delete') || t.isUserEvent('undo') || t.isUserEvent('redo') || t.isUserEvent('move'))) {
          latest.current.onText(update.state.doc.toString());
        }
      }),
      ...(placeholder ? [placeholderText(placeholder)] : []),
      ...(minHeight ? [EditorView.theme({ '.cm-content, .cm-gutter': { minHeight: `${minHeight}px` } })] : []),
    ];
    const extensions: Extension[] =
      language === 'json'
        ? [basicSetup, json(), linter(jsonParseLinter()), ...common]
        : [
            minimalSetup,
            bracketMatching(),
            closeBrackets(),
            keymap.of(closeBracketsKeymap),
            jsonata,
            autocompletion({ override: [completeExpression(() => latest.current.fieldPaths)] }),
            EditorView.lineWrapping,
            ...(minHeight ? [lineNumbers()] : []),
            ...common,
          ];
    const created = new EditorView({ parent: host.current!, state: EditorState.create({ doc: text, extensions }) });
    view.current = created;
    return () => created.destroy();
    // Made once per language and mode; the text follows below.
  }, [label, language, readOnly]);

  // The text changed elsewhere (the builder, a reload): show it, unless the person is typing here.
  useEffect(() => {
    const v = view.current;
    if (!v || v.hasFocus || v.state.doc.toString() === text) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
  }, [text]);

  return <div ref={host} className="gate-code" />;
}
