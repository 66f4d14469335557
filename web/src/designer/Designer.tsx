import '@puckeditor/core/no-external.css';
import './designer.css';
import { Alert, Badge, Button, Code, Group, List, Paper, ScrollArea, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { StyleInjector } from '@dnd-kit/dom';
import { useDragDropManager } from '@dnd-kit/react';
import { createUsePuck, Puck, type Data } from '@puckeditor/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, errorText, must } from '../api';
import { cspNonce } from '../csp';
import { Publish } from '../pages/Template';
import { PreviewPanel, SampleDataPanel, useSampleData } from '../pages/workbench';
import { useSession } from '../session';
import { designerConfig, ProblemsContext } from './config';
import { DesignerHostContext, type DesignerHost } from './host';
import { problemOwner, sameDefinition, toDefinition, toPuck, type ComponentTypeInfo, type Definition, type PuckDocument } from './model';

/**
 * The template designer (docs/web.md "The designer"), on Puck: the palette and the outline, the
 * canvas (a sketch of the structure: drag to reorder or move into containers), the properties of the
 * selected block (or the document's settings when none is), undo and redo, and beside them the sample
 * data and the real PDF preview of the saved draft. Every change is saved as the draft once the
 * editing pauses (what the API refuses is shown on the component it concerns, nothing is saved), and
 * the preview follows the saved draft.
 */

const usePuck = createUsePuck();

// CodeMirror loads with the first look at the code, not with the designer.
const CodeView = lazy(() => import('./CodeView'));

interface Problem {
  path: string;
  message: string;
}

const NO_PROBLEMS: Problem[] = [];

type SaveState = { state: 'saved' | 'saving' | 'unchanged' } | { state: 'refused'; message: string; problems: Problem[]; definition: Definition } | { state: 'failed'; message: string };

/** The dashboard's designer: the project chosen in the switcher, read-only for viewers. */
export default function Designer() {
  const { id = '' } = useParams();
  const { team } = useSession();
  return <TemplateDesigner id={id} canEdit={team?.role !== 'viewer'} ready={!!team} host={DASHBOARD} />;
}

const DASHBOARD: DesignerHost = { backLink: true, uploads: true };

/**
 * The designer of one template, wherever it runs: the dashboard (above) or another site's page
 * (web/src/embed, docs/embedding.md), which says what it offers and hears of saves and publishes.
 * `ready`: the calls may be made (the credential is in place).
 */
export function TemplateDesigner({ id, canEdit, ready, host }: { id: string; canEdit: boolean; ready: boolean; host: DesignerHost }) {
  const template = useQuery({ queryKey: ['template', id], queryFn: () => must(api.GET('/api/templates/{id}', { params: { path: { id } } })), enabled: ready });
  const catalogue = useQuery({
    queryKey: ['component-types'],
    queryFn: async () => (await must(api.GET('/api/templates/component-types'))).data as unknown as ComponentTypeInfo[],
    staleTime: Infinity,
    enabled: ready,
  });
  if (template.error || catalogue.error) return <Alert color="red" role="alert">{(template.error ?? catalogue.error)?.message}</Alert>;
  if (!template.data || !catalogue.data) return null;
  const t = template.data;
  const definition = { schema: t.schema, variables: t.variables, constants: t.constants, calculatedVariables: t.calculatedVariables } as Definition;
  return (
    <DesignerHostContext.Provider value={host}>
      <Editor id={id} name={t.name} published={t.isPublished} version={t.latestVersion ?? 0} formats={t.outputFormats} revision={t.updatedAt} stored={definition} catalogue={catalogue.data} canEdit={canEdit} host={host} />
    </DesignerHostContext.Provider>
  );
}

function Editor(props: { id: string; name: string; published: boolean; version: number; formats: string[]; revision: string; stored: Definition; catalogue: ComponentTypeInfo[]; canEdit: boolean; host: DesignerHost }) {
  const { id, catalogue, canEdit, host } = props;
  const queries = useQueryClient();
  const config = useMemo(() => designerConfig(catalogue), [catalogue]);
  // Puck's document is made once, from what was stored when the designer opened; after that the
  // designer is the author of the draft (a save does not reload it).
  const [initial] = useState(() => toPuck(props.stored, catalogue) as unknown as Data);
  const saved = useRef<Definition>(props.stored);
  const [draft, setDraft] = useState<Definition>(props.stored);
  const [pending] = useDebouncedValue(draft, 600);
  const [status, setStatus] = useState<SaveState>({ state: 'unchanged' });
  const [view, setView] = useState('Canvas');
  const sample = useSampleData(id, canEdit);

  const save = useMutation({
    mutationFn: async (definition: Definition) => {
      const { data, error } = await api.PUT('/api/templates/{id}', {
        params: { path: { id } },
        body: definition as never,
      });
      return { definition, error, updatedAt: data?.updatedAt };
    },
    onSuccess: async ({ definition, error, updatedAt }) => {
      if (error !== undefined) {
        const related = (error as { relatedInfo?: { errors?: Problem[] } }).relatedInfo;
        setStatus({ state: 'refused', message: errorText(error), problems: related?.errors ?? [], definition });
        return;
      }
      saved.current = definition;
      setStatus({ state: 'saved' });
      host.onSaved?.({ templateId: id, savedAt: updatedAt ?? new Date().toISOString() });
      await queries.invalidateQueries({ queryKey: ['template', id] });
    },
    onError: (error) => setStatus({ state: 'failed', message: error.message }),
  });

  // One save at a time, in the order of the edits: a change made while one is on its way is saved after it.
  const inFlight = useRef(false);
  const queued = useRef<Definition>(undefined);
  const requestSave = (definition: Definition) => {
    if (inFlight.current) {
      queued.current = definition;
      return;
    }
    inFlight.current = true;
    setStatus({ state: 'saving' });
    save.mutate(definition, {
      onSettled: () => {
        inFlight.current = false;
        const next = queued.current;
        queued.current = undefined;
        if (next && !sameDefinition(next, saved.current)) requestSave(next);
      },
    });
  };

  useEffect(() => {
    if (!canEdit) return;
    if (sameDefinition(pending, saved.current)) {
      // Undone back to what is stored: nothing to save, and the refusal is over.
      setStatus((s) => (s.state === 'refused' || s.state === 'failed' ? { state: 'saved' } : s));
      return;
    }
    if (status.state === 'refused' && sameDefinition(pending, status.definition)) return;
    requestSave(pending);
    // Saving follows the pending definition only (the status and the save function are read as they are then).
  }, [pending, canEdit]);

  const problems = useMemo(() => {
    const byOwner = new Map<string, string[]>();
    if (status.state !== 'refused') return byOwner;
    for (const p of status.problems) {
      const owner = problemOwner(p.path, status.definition) ?? '';
      // On its component a problem names the prop (`dataSource`, `columns[1].field`); elsewhere its whole path.
      const where = owner ? (/.*\.props\.(.+)$/.exec(p.path)?.[1] ?? p.path) : p.path;
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), `${where}: ${p.message}`]);
    }
    return byOwner;
  }, [status]);

  return (
    <ProblemsContext.Provider value={problems}>
      <Puck
        config={config}
        data={initial}
        iframe={{ enabled: false }}
        permissions={canEdit ? {} : { drag: false, duplicate: false, delete: false, insert: false, edit: false }}
        onChange={(data) => setDraft(toDefinition(data as unknown as PuckDocument, catalogue))}
      >
        <DragStylesNonce />
        <Stack gap="sm">
          <Group justify="space-between">
            <Group>
              <Title order={2}>{props.name}</Title>
              {props.published ? <Badge color="green">published v{props.version}</Badge> : <Badge color="gray">draft</Badge>}
              <SaveStatus status={status} canEdit={canEdit} />
            </Group>
            <Group>
              <History />
              {host.backLink && (
                <Button component={Link} to={`/templates/${id}`} variant="default">
                  Back to the template
                </Button>
              )}
              {canEdit && <Publish id={id} onPublished={host.onPublished} />}
            </Group>
          </Group>
          {status.state === 'refused' && (
            <Alert color="red" role="alert" title="The draft was not saved">
              <Text size="sm">{status.message}</Text>
              {problems.get('') && (
                <List size="sm" mt="xs">
                  {problems.get('')!.map((p) => (
                    <List.Item key={p}>
                      <Code>{p}</Code>
                    </List.Item>
                  ))}
                </List>
              )}
            </Alert>
          )}
          <div className="designer-grid">
            <Stack gap="sm">
              <Paper withBorder component="section" aria-label="Outline">
                <ScrollArea.Autosize scrollbars="y" mah="calc(50vh - 120px)">
                  <Puck.Outline />
                </ScrollArea.Autosize>
              </Paper>
              {canEdit && (
                <Paper withBorder component="section" aria-label="Components">
                  <Title order={3} size="h5" px="sm" pt="sm">
                    Components
                  </Title>
                  <ScrollArea.Autosize scrollbars="y" mah="calc(50vh - 120px)">
                    <div className="designer-palette">
                      <Puck.Components />
                    </div>
                  </ScrollArea.Autosize>
                </Paper>
              )}
            </Stack>
            <Stack gap="xs">
              <SegmentedControl aria-label="View" data={['Canvas', 'Code']} value={view} onChange={setView} />
              <Paper withBorder component="section" aria-label="Canvas" className="designer-canvas" display={view === 'Canvas' ? undefined : 'none'}>
                <ScrollArea.Autosize scrollbars="y" mah="calc(100vh - 220px)">
                  <Puck.Preview />
                </ScrollArea.Autosize>
              </Paper>
              {view === 'Code' && <CodePanel draft={draft} catalogue={catalogue} problems={status.state === 'refused' ? status.problems : NO_PROBLEMS} readOnly={!canEdit} />}
            </Stack>
            <Paper withBorder component="section" aria-label="Properties" className="designer-side">
              <ScrollArea.Autosize scrollbars="y" mah="calc(100vh - 180px)">
                <SelectedProblems problems={problems} />
                <Puck.Fields />
              </ScrollArea.Autosize>
            </Paper>
          </div>
          <div className="designer-bottom">
            <SampleDataPanel sample={sample} maxRows={16} id={id} revision={props.revision} calculated={(draft.calculatedVariables as { name: string }[] | undefined)?.map((c) => c.name) ?? []} />
            <PreviewPanel id={id} formats={props.formats} revision={props.revision} variables={sample.debounced} />
          </div>
        </Stack>
      </Puck>
    </ProblemsContext.Provider>
  );
}

function SaveStatus({ status, canEdit }: { status: SaveState; canEdit: boolean }) {
  if (!canEdit) return <Badge variant="outline">read only</Badge>;
  const text = { unchanged: 'No changes', saving: 'Saving…', saved: 'Draft saved', refused: 'Not saved', failed: 'Not saved' }[status.state];
  return (
    <Text size="sm" c={status.state === 'refused' || status.state === 'failed' ? 'red' : 'dimmed'} role="status" aria-label="Draft">
      {text}
    </Text>
  );
}

/** Undo and redo over Puck's history (every change, settings included). */
function History() {
  const back = usePuck((s) => s.history.back);
  const forward = usePuck((s) => s.history.forward);
  const hasPast = usePuck((s) => s.history.hasPast);
  const hasFuture = usePuck((s) => s.history.hasFuture);
  return (
    <Group gap="xs">
      <Button variant="default" onClick={back} disabled={!hasPast}>
        Undo
      </Button>
      <Button variant="default" onClick={forward} disabled={!hasFuture}>
        Redo
      </Button>
    </Group>
  );
}

/** The problems of the selected block, above its fields. */
function SelectedProblems({ problems }: { problems: ReadonlyMap<string, string[]> }) {
  const selected = usePuck((s) => s.selectedItem?.props.id as string | undefined);
  const list = selected ? problems.get(selected) : undefined;
  if (!list) return null;
  return (
    <Alert color="red" m="sm" title="Problems of this component">
      <List size="sm">
        {list.map((p) => (
          <List.Item key={p}>{p}</List.Item>
        ))}
      </List>
    </Alert>
  );
}

/**
 * Puck's drag and drop (dnd-kit) writes a `<style>` element while a block is dragged; dnd-kit's
 * StyleInjector gives it the page's CSP nonce when told to, which Puck does not do, so it is told here
 * (registering a plugin again updates its options).
 */
function DragStylesNonce() {
  const manager = useDragDropManager();
  useEffect(() => {
    manager?.registry.register(StyleInjector, { nonce: cspNonce });
  }, [manager]);
  return null;
}

/**
 * The code view beside the visual editor: it shows the draft as the visual editor holds it, and what is
 * typed here, once it is a JSON object with a schema, becomes the visual editor's document (one step of
 * its history, so Undo takes it back).
 */
function CodePanel({ draft, catalogue, problems, readOnly }: { draft: Definition; catalogue: ComponentTypeInfo[]; problems: Problem[]; readOnly: boolean }) {
  const dispatch = usePuck((s) => s.dispatch);
  const [invalid, setInvalid] = useState<string>();
  const [typed, setTyped] = useState<string>();
  const [pending] = useDebouncedValue(typed, 400);
  useEffect(() => {
    if (pending === undefined) return;
    try {
      const value: unknown = JSON.parse(pending);
      if (!value || typeof value !== 'object' || Array.isArray(value) || !('schema' in value)) {
        setInvalid('The definition is a JSON object with at least "schema"');
        return;
      }
      setInvalid(undefined);
      dispatch({ type: 'setData', data: toPuck(value as Definition, catalogue) as unknown as Data });
    } catch {
      setInvalid('Not valid JSON yet: the designer keeps the last valid definition');
    }
  }, [pending, catalogue, dispatch]);
  return (
    <Paper withBorder component="section" aria-label="Code">
      {invalid && (
        <Text size="sm" c="red" p="xs" role="status">
          {invalid}
        </Text>
      )}
      <Suspense fallback={<Text p="sm">Loading the code view…</Text>}>
        <CodeView text={JSON.stringify(draft, null, 2)} onText={setTyped} problems={problems} catalogue={catalogue} readOnly={readOnly} />
      </Suspense>
    </Paper>
  );
}
