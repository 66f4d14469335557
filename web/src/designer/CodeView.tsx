import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { syntaxTree } from '@codemirror/language';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorState, StateEffect, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import type { SyntaxNode } from '@lezer/common';
import { basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';
import { cspNonce } from '../csp';
import { schemaAt, type Step } from './definition-schema';
import type { ComponentTypeInfo } from './model';

/**
 * The code view (docs/web.md "The code view"): the definition as JSON in CodeMirror, with completion
 * of keys and values from the definition's schema (components' props from the catalogue), JSON syntax
 * errors and the API's problems marked where they are. It follows the visual editor while it does not
 * have the focus; what is typed here goes to the visual editor once it is a JSON object.
 */

export interface CodeProblem {
  path: string;
  message: string;
}

/** The unquoted text of a string node. */
function unquote(view: EditorState, node: SyntaxNode): string {
  const text = view.sliceDoc(node.from, node.to);
  try {
    return JSON.parse(text) as string;
  } catch {
    return text.replace(/^"|"$/g, '');
  }
}

/** The path of the value `node` is (or is in): property names and array indexes from the top. */
function pathOf(state: EditorState, node: SyntaxNode | null): Step[] {
  const path: Step[] = [];
  for (let at = node; at; at = at.parent) {
    const parent = at.parent;
    if (at.name === 'Property') {
      const name = at.getChild('PropertyName');
      if (name) path.unshift(unquote(state, name));
    } else if (parent?.name === 'Array' && at.name !== '[' && at.name !== ']' && at.name !== ',') {
      let index = 0;
      for (let sibling = at.prevSibling; sibling; sibling = sibling.prevSibling) if (!['[', ',', '⚠'].includes(sibling.name)) index++;
      path.unshift(index);
    }
  }
  return path;
}

function completeFrom(catalogue: readonly ComponentTypeInfo[]) {
  return (context: CompletionContext): CompletionResult | null => {
    const { state, pos } = context;
    const node = syntaxTree(state).resolveInner(pos, -1);
    let document: unknown;
    try {
      document = JSON.parse(state.doc.toString());
    } catch {
      document = undefined;
    }
    const word = context.matchBefore(/"?[\w-]*"?/);
    const from = word ? word.from : pos;
    // A key: in an object, where a property name goes.
    const object = node.name === 'Object' ? node : node.name === 'PropertyName' ? node.parent?.parent : node.parent?.name === 'Object' && node.name === '⚠' ? node.parent : null;
    if (object && object.name === 'Object') {
      const schema = schemaAt(pathOf(state, object), document, catalogue);
      const present = new Set(object.getChildren('Property').map((p) => p.getChild('PropertyName')).filter((n): n is SyntaxNode => !!n).map((n) => unquote(state, n)));
      const keys = Object.keys(schema?.properties ?? {}).filter((k) => !present.has(k) || node.name === 'PropertyName');
      if (!keys.length) return null;
      return { from, options: keys.map((k) => ({ label: `"${k}"`, type: 'property', apply: `"${k}": ` })), validFor: /^"?[\w-]*"?$/ };
    }
    // A value: after a property's colon, or inside a string value.
    const property = node.name === 'Property' ? node : node.parent?.name === 'Property' ? node.parent : null;
    if (property) {
      const name = property.getChild('PropertyName');
      if (!name) return null;
      const schema = schemaAt([...pathOf(state, property.parent), unquote(state, name)], document, catalogue);
      const values = (schema?.anyOf ?? [schema]).flatMap((s) => s?.enum ?? (s?.type === 'boolean' ? [true, false] : []));
      if (!values.length) return null;
      return { from, options: values.map((v) => ({ label: JSON.stringify(v), type: 'enum' })), validFor: /^"?[\w-]*"?$/ };
    }
    return null;
  };
}

/** Where a problem's path (`schema.sections[0].components[2].props.text`) is in the text. */
function rangeOf(state: EditorState, path: string): { from: number; to: number } | undefined {
  const steps = path.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== '');
  let node: SyntaxNode | null = syntaxTree(state).topNode.firstChild;
  for (const step of steps) {
    if (!node) return undefined;
    if (node.name === 'Object') {
      const property = node.getChildren('Property').find((p) => {
        const name = p.getChild('PropertyName');
        return name && unquote(state, name) === step;
      });
      if (!property) break;
      node = property.lastChild;
    } else if (node.name === 'Array' && /^\d+$/.test(step)) {
      const items: SyntaxNode[] = [];
      for (let c = node.firstChild; c; c = c.nextSibling) if (!['[', ']', ',', '⚠'].includes(c.name)) items.push(c);
      const item = items[Number(step)];
      if (!item) break;
      node = item;
    } else break;
  }
  return node ? { from: node.from, to: node.to } : undefined;
}

/** Says the API's problems changed: the marks are made again. */
const problemsChanged = StateEffect.define<null>();

export default function CodeView({ text, onText, problems, catalogue, readOnly }: { text: string; onText: (text: string) => void; problems: CodeProblem[]; catalogue: readonly ComponentTypeInfo[]; readOnly: boolean }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>(undefined);
  const latest = useRef({ onText, problems });
  latest.current = { onText, problems };

  useEffect(() => {
    const apiProblems = linter(
      (v) =>
        latest.current.problems.flatMap((p): Diagnostic[] => {
          const range = rangeOf(v.state, p.path.replace(/^(?!schema\.|variables|constants|calculatedVariables)/, 'schema.'));
          return range ? [{ ...range, severity: 'error', message: `${p.path}: ${p.message}`, source: 'Formwork' }] : [];
        }),
      { needsRefresh: (update) => update.transactions.some((t) => t.effects.some((e) => e.is(problemsChanged))), delay: 0 },
    );
    const extensions: Extension[] = [
      basicSetup,
      json(),
      linter(jsonParseLinter()),
      apiProblems,
      lintGutter(),
      autocompletion({ override: [completeFrom(catalogue)] }),
      EditorView.cspNonce.of(cspNonce),
      EditorView.contentAttributes.of({ 'aria-label': 'Definition (JSON)' }),
      EditorState.readOnly.of(readOnly),
      EditorView.updateListener.of((update) => {
        if (update.docChanged && update.transactions.some((t) => t.isUserEvent('input') || t.isUserEvent('delete') || t.isUserEvent('undo') || t.isUserEvent('redo') || t.isUserEvent('move'))) {
          latest.current.onText(update.state.doc.toString());
        }
      }),
    ];
    const created = new EditorView({ parent: host.current!, state: EditorState.create({ doc: text, extensions }) });
    view.current = created;
    return () => created.destroy();
    // The editor is made once (its text follows below).
  }, [catalogue, readOnly]);

  // The visual editor changed the definition: show it, unless the person is typing here.
  useEffect(() => {
    const v = view.current;
    if (!v || v.hasFocus || v.state.doc.toString() === text) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
  }, [text]);

  // New problems from the API: mark them.
  useEffect(() => {
    view.current?.dispatch({ effects: problemsChanged.of(null) });
  }, [problems]);

  return <div ref={host} className="designer-code" />;
}
