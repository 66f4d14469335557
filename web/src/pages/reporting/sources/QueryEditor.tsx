import { Alert, Anchor, Badge, Button, Checkbox, Code, Grid, Group, List, Loader, Modal, NumberInput, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import type { paths } from '@formwork/client';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { ConfirmButton, Failure, when } from '../../controls';
import { useDiscoveredSchema } from './DatasourceDetail';
import { ResultsGrid } from './ResultsGrid';
import { SchemaTree } from './SchemaTree';
import { call, ErrorAlert, problemsAt, ApiRefusal, type ParameterDef, type Query, type QueryVersion } from './shared';
import { SqlEditor, type SqlEditorHandle } from './SqlEditor';

type ParameterType = ParameterDef['type'];
type QueryBody = NonNullable<paths['/api/reporting/queries']['post']['requestBody']>['content']['application/json'];
const TYPES: Array<{ value: ParameterType; label: string }> = [
  { value: 'string', label: 'Text' },
  { value: 'number', label: 'Number' },
  { value: 'integer', label: 'Whole number' },
  { value: 'boolean', label: 'Yes or no' },
  { value: 'date', label: 'Date' },
  { value: 'datetime', label: 'Date and time' },
];
/** Names every query knows without defining them (docs/reporting.md "Query text"). */
const BUILT_INS = new Set(['now', 'today', 'scheduledFor']);
const SQL_KINDS = new Set(['postgres', 'mysql', 'sqlite']);

/** The parameter names `{{ name }}` the text uses, in order of first use, built-ins left out. */
function placeholdersOf(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)) if (!BUILT_INS.has(m[1]) && !names.includes(m[1])) names.push(m[1]);
  return names;
}

/** A value typed in the run form as the API takes it (the API coerces and checks it: ERR_RPT_007). */
function valueOf(def: ParameterDef, raw: string): unknown {
  if (raw === '') return undefined;
  if (def.multiple) return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (def.type === 'boolean') return raw === 'true';
  if (def.type === 'datetime') return new Date(raw).toISOString();
  return raw;
}

interface Draft {
  name: string;
  datasourceId: string | null;
  text: string;
  parameters: ParameterDef[];
}

const sameDraft = (a: Draft, q: Query | undefined) =>
  !!q && a.name === q.name && a.datasourceId === q.datasourceId && a.text === q.text && JSON.stringify(a.parameters) === JSON.stringify(q.parameters);

/**
 * A query object's page (and "New query"): the name and datasource, the SQL editor with completion from
 * the datasource's discovered schema (whose tree beside it puts a column where the cursor is), the
 * parameters its text uses (type, required) and a form for their values, "Run" (the API's preview of
 * the draft, saved first) with the rows as a grid, "Save draft", "Publish" and the versions.
 */
export function QueryEditorPage() {
  const { id } = useParams();
  const isNew = !id || id === 'new';
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const { team } = useSession();
  const canWrite = team?.role !== 'viewer';
  const queries = useQueryClient();
  const editor = useRef<SqlEditorHandle>(null);

  const query = useQuery({
    queryKey: ['reporting-query', team?.id, id],
    queryFn: () => call(api.GET('/api/reporting/queries/{id}', { params: { path: { id: id! } } })),
    enabled: !!team && !isNew,
  });
  const datasources = useQuery({
    queryKey: ['reporting-datasources', team?.id, 'all'],
    queryFn: () => must(api.GET('/api/reporting/datasources', { params: { query: { limit: 100 } } })),
    enabled: !!team,
  });
  const [draft, setDraft] = useState<Draft>({ name: '', datasourceId: search.get('datasource'), text: 'SELECT ', parameters: [] });
  const [values, setValues] = useState<Record<string, string>>({});
  const [releaseNotes, setReleaseNotes] = useState('');
  const [viewing, setViewing] = useState<number>();
  const loaded = useRef<string>(undefined);

  // The saved query becomes the draft when it is first read (and after a restore, which changes it).
  useEffect(() => {
    const q = query.data;
    if (!q || loaded.current === `${q.id}:${q.updatedAt}`) return;
    loaded.current = `${q.id}:${q.updatedAt}`;
    setDraft({ name: q.name, datasourceId: q.datasourceId, text: q.text, parameters: q.parameters });
  }, [query.data]);

  const datasource = datasources.data?.data.find((d) => d.id === draft.datasourceId);
  const schema = useDiscoveredSchema(draft.datasourceId ?? undefined, team?.id);

  // The parameters are those the text uses: a definition kept as it was, a new name as text.
  const names = useMemo(() => placeholdersOf(draft.text), [draft.text]);
  const parameters = useMemo(() => names.map((name) => draft.parameters.find((p) => p.name === name) ?? { name, type: 'string' as const }), [names, draft.parameters]);
  const current: Draft = { ...draft, parameters };
  const dirty = isNew || !sameDraft(current, query.data);
  const setParameter = (name: string, change: Partial<ParameterDef>) =>
    setDraft((d) => {
      const existing = d.parameters.find((p) => p.name === name) ?? { name, type: 'string' as const };
      return { ...d, parameters: [...d.parameters.filter((p) => p.name !== name), { ...existing, ...change }] };
    });

  /** Saves the draft when it changed (creating the query the first time); answers the saved query. */
  const save = async (): Promise<Query> => {
    if (!dirty && query.data) return query.data;
    const body: QueryBody = { name: current.name.trim(), datasourceId: current.datasourceId ?? '', language: 'sql', text: current.text, parameters: current.parameters as QueryBody['parameters'] };
    if (isNew) return call(api.POST('/api/reporting/queries', { body }));
    return call(api.PATCH('/api/reporting/queries/{id}', { params: { path: { id: id! } }, body }));
  };
  const afterSave = (saved: Query) => {
    queries.setQueryData(['reporting-query', team?.id, saved.id], saved);
    void queries.invalidateQueries({ queryKey: ['reporting-queries'] });
    if (isNew) void navigate(`/reporting/queries/${saved.id}`, { replace: true });
  };
  const saveDraft = useMutation({ mutationFn: save, onSuccess: afterSave });
  const run = useMutation({
    mutationFn: async () => {
      const saved = await save();
      afterSave(saved);
      const given = Object.fromEntries(parameters.map((p) => [p.name, valueOf(p, values[p.name] ?? '')]).filter(([, v]) => v !== undefined));
      const { data, error, response } = await api.POST('/api/reporting/queries/{id}/preview', { params: { path: { id: saved.id } }, body: { parameters: given, limit: 100 } });
      if (error !== undefined || !data) throw new ApiRefusal(error);
      if (response.status === 202) throw new Error('The agent has not answered yet: press "Run" again in a moment.');
      return data as Exclude<typeof data, { taskId: string }>;
    },
  });
  const versions = useQuery({
    queryKey: ['reporting-query-versions', team?.id, id],
    queryFn: () => must(api.GET('/api/reporting/queries/{id}/versions', { params: { path: { id: id! } } })),
    enabled: !!team && !isNew,
  });
  const refreshAfterVersion = () =>
    Promise.all([queries.invalidateQueries({ queryKey: ['reporting-query-versions'] }), queries.invalidateQueries({ queryKey: ['reporting-query'] }), queries.invalidateQueries({ queryKey: ['reporting-queries'] })]);
  const publish = useMutation({
    mutationFn: async () => {
      const saved = await save();
      afterSave(saved);
      return call(api.POST('/api/reporting/queries/{id}/publish', { params: { path: { id: saved.id } }, body: releaseNotes.trim() ? { releaseNotes: releaseNotes.trim() } : {} }));
    },
    onSuccess: () => {
      setReleaseNotes('');
      return refreshAfterVersion();
    },
  });
  const restore = useMutation({
    mutationFn: (version: number) => must(api.POST('/api/reporting/queries/{id}/versions/{version}/restore', { params: { path: { id: id!, version: String(version) } }, body: {} })),
    onSuccess: refreshAfterVersion,
  });

  const editError = saveDraft.error ?? run.error ?? publish.error;
  const textProblems = problemsAt(editError, 'text');
  const paramProblem = (i: number) => problemsAt(editError, `parameters[${i}]`);
  const at = (path: string) => problemsAt(editError, path).map((p) => p.message).join('; ') || undefined;

  if (!isNew && query.error) {
    return (
      <Stack>
        <Anchor component={Link} to="/reporting/queries" size="sm">
          Queries
        </Anchor>
        <Alert color="red" role="alert">
          {query.error.message}
        </Alert>
      </Stack>
    );
  }
  if (!isNew && !query.data) return <Loader aria-label="Loading" />;
  const q = query.data;
  const sqlDatasources = (datasources.data?.data ?? []).map((d) => ({ value: d.id, label: `${d.name} (${d.kind})`, disabled: !SQL_KINDS.has(d.kind) }));
  const dialect = datasource && SQL_KINDS.has(datasource.kind) ? (datasource.kind as 'postgres' | 'mysql' | 'sqlite') : undefined;

  return (
    <Stack>
      <div>
        <Anchor component={Link} to="/reporting/queries" size="sm">
          Queries
        </Anchor>
        <Group justify="space-between" align="end">
          <Title order={2}>{isNew ? 'New query' : q!.name}</Title>
          {q && (
            <Group gap="xs">
              {q.latestVersion > 0 ? <Badge color="green">published: version {q.latestVersion}</Badge> : <Badge color="gray">not published</Badge>}
              {dirty && canWrite && <Badge color="yellow">unsaved changes</Badge>}
            </Group>
          )}
        </Group>
      </div>

      <Grid gap="lg">
        <Grid.Col span={{ base: 12, md: 8 }}>
          <Stack>
            <Group grow align="start">
              <TextInput label="Name" required value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.currentTarget.value })} error={at('name')} readOnly={!canWrite} />
              <Select
                label="Datasource"
                required
                placeholder="Choose a datasource"
                value={draft.datasourceId}
                onChange={(v) => setDraft({ ...draft, datasourceId: v })}
                data={sqlDatasources}
                error={at('datasourceId') ?? at('language')}
                readOnly={!canWrite}
              />
            </Group>
            <Stack gap={4}>
              <Text size="sm" fw={500} id="sql-label">
                SQL
              </Text>
              <Text size="xs" c="dimmed">
                A placeholder <Code>{'{{ name }}'}</Code> is a parameter, always bound as a value; <Code>{'[[ AND x = {{ name }} ]]'}</Code> is left out when it has none. Ctrl+Space completes keywords, tables and columns.
              </Text>
              <SqlEditor ref={editor} label="SQL" text={draft.text} onText={(text) => setDraft((d) => ({ ...d, text }))} dialect={dialect} schema={schema.data ?? undefined} problems={textProblems} readOnly={!canWrite} />
              {textProblems.length > 0 && (
                <List size="sm" c="red" aria-label="Problems in the SQL">
                  {textProblems.map((p) => (
                    <List.Item key={p.message}>
                      {p.code ? `${p.code}: ` : ''}
                      {p.message}
                    </List.Item>
                  ))}
                </List>
              )}
            </Stack>

            {parameters.length > 0 && (
              <Paper withBorder p="sm" component="section" aria-label="Parameters">
                <Stack gap="xs">
                  <Title order={4}>Parameters</Title>
                  <Table aria-label="Parameter definitions">
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Name</Table.Th>
                        <Table.Th>Type</Table.Th>
                        <Table.Th>Required</Table.Th>
                        <Table.Th>Value for the run</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {parameters.map((p, i) => (
                        <Table.Tr key={p.name}>
                          <Table.Td>
                            <Code>{p.name}</Code>
                            {paramProblem(i).map((problem) => (
                              <Text key={problem.path} size="xs" c="red">
                                {problem.message}
                              </Text>
                            ))}
                          </Table.Td>
                          <Table.Td>
                            <Select size="xs" aria-label={`Type of ${p.name}`} allowDeselect={false} value={p.type} onChange={(v) => v && setParameter(p.name, { type: v as ParameterType, default: undefined })} data={TYPES} readOnly={!canWrite} />
                          </Table.Td>
                          <Table.Td>
                            <Checkbox aria-label={`${p.name} is required`} checked={!!p.required} onChange={(e) => setParameter(p.name, { required: e.currentTarget.checked })} disabled={!canWrite} />
                          </Table.Td>
                          <Table.Td>
                            <ParameterInput def={p} value={values[p.name] ?? ''} onChange={(v) => setValues((was) => ({ ...was, [p.name]: v }))} error={fieldError(run.error, p.name)} />
                          </Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                </Stack>
              </Paper>
            )}

            <ErrorAlert error={editError} shown={['text', 'parameters', 'name', 'datasourceId', 'language']} />
            {canWrite && (
              <Group>
                <Button onClick={() => run.mutate()} loading={run.isPending} disabled={!draft.datasourceId || !draft.name.trim()}>
                  Run
                </Button>
                <Button variant="default" onClick={() => saveDraft.mutate()} loading={saveDraft.isPending} disabled={!dirty || !draft.datasourceId || !draft.name.trim()}>
                  {isNew ? 'Create query' : 'Save draft'}
                </Button>
                {!draft.name.trim() && (
                  <Text size="xs" c="dimmed">
                    Name the query to run it.
                  </Text>
                )}
              </Group>
            )}
          </Stack>
        </Grid.Col>

        <Grid.Col span={{ base: 12, md: 4 }}>
          <Paper withBorder p="sm" component="section" aria-label="Tables">
            <Stack gap="xs">
              <Title order={4}>Tables</Title>
              {!draft.datasourceId && <Text size="sm" c="dimmed">Choose a datasource to see its tables.</Text>}
              {draft.datasourceId && schema.data === null && (
                <Text size="sm" c="dimmed">
                  This datasource&apos;s schema has not been read yet:{' '}
                  <Anchor component={Link} to={`/reporting/datasources/${draft.datasourceId}`}>
                    read it on its page
                  </Anchor>{' '}
                  for completion and the tables here.
                </Text>
              )}
              {schema.data && <SchemaTree schema={schema.data} label={`Tables of ${datasource?.name ?? 'the datasource'}`} onPick={(name) => editor.current?.insert(name)} />}
              {schema.data && (
                <Text size="xs" c="dimmed">
                  Enter on a column (or a click) puts its name where the cursor is.
                </Text>
              )}
            </Stack>
          </Paper>
        </Grid.Col>
      </Grid>

      <Paper withBorder p="sm" component="section" aria-label="Results">
        <Stack gap="xs">
          <Title order={4}>Results</Title>
          {run.isPending && <Loader size="sm" aria-label="Running" />}
          {!run.data && !run.isPending && <Text size="sm" c="dimmed">&quot;Run&quot; saves the draft and shows its first 100 rows here.</Text>}
          {run.data && !run.isPending && (
            <>
              <Text size="sm">
                {run.data.rowCount} {run.data.rowCount === 1 ? 'row' : 'rows'} in {run.data.durationMs} ms
                {run.data.truncated ? ' (more rows exist: the preview stops at 100)' : ''}
                {run.data.executedBy === 'agent' ? ', through the agent' : ''}.
              </Text>
              <ResultsGrid label="Preview results" columns={run.data.columns} rows={run.data.rows} />
            </>
          )}
        </Stack>
      </Paper>

      {q && (
        <Paper withBorder p="sm" component="section" aria-label="Versions">
          <Stack gap="xs">
            <Title order={4}>Versions</Title>
            <Text size="sm" c="dimmed">
              Reports use a published version; publishing freezes the saved draft as the next one.
            </Text>
            {canWrite && (
              <form
                onSubmit={(e: FormEvent) => {
                  e.preventDefault();
                  publish.mutate();
                }}
              >
                <Group align="end">
                  <TextInput label="Release notes" value={releaseNotes} onChange={(e) => setReleaseNotes(e.currentTarget.value)} flex={1} maw={480} />
                  <Button type="submit" loading={publish.isPending}>
                    Publish
                  </Button>
                </Group>
              </form>
            )}
            {publish.data && !publish.isPending && (
              <Text size="sm" c="green" role="status">
                Published version {publish.data.version}.
              </Text>
            )}
            <Failure error={restore.error} />
            {versions.data && versions.data.length === 0 && <Text c="dimmed">Not published yet.</Text>}
            {versions.data && versions.data.length > 0 && (
              <Table aria-label="Versions of the query">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Version</Table.Th>
                    <Table.Th>Published</Table.Th>
                    <Table.Th>By</Table.Th>
                    <Table.Th>Release notes</Table.Th>
                    <Table.Th>Actions</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {versions.data.map((v: QueryVersion) => (
                    <Table.Tr key={v.id}>
                      <Table.Td>{v.version}</Table.Td>
                      <Table.Td>{when(v.publishedAt)}</Table.Td>
                      <Table.Td>{v.publishedBy ?? '—'}</Table.Td>
                      <Table.Td>{v.releaseNotes ?? ''}</Table.Td>
                      <Table.Td>
                        <Group gap="xs" wrap="nowrap">
                          <Button size="compact-sm" variant="default" aria-label={`View version ${v.version}`} onClick={() => setViewing(v.version)}>
                            View
                          </Button>
                          {canWrite && v.version !== q.latestVersion && (
                            <ConfirmButton label="Restore" name={`Restore version ${v.version}`} title={`Restore version ${v.version}?`} confirm="Restore and publish" onConfirm={() => restore.mutate(v.version)} color="blue">
                              Its SQL, parameters and datasource become the draft and are published at once as the next version.
                            </ConfirmButton>
                          )}
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Stack>
        </Paper>
      )}
      {q && <VersionDialog queryId={q.id} version={viewing} onClose={() => setViewing(undefined)} />}
    </Stack>
  );
}

/** The field a preview refusal names (400 ERR_RPT_007 `relatedInfo.field`), as that input's error. */
function fieldError(error: Error | null, name: string): string | undefined {
  if (!(error instanceof ApiRefusal) || error.code !== 'ERR_RPT_007') return undefined;
  const field = error.field;
  return field === name || field?.startsWith(`${name}[`) ? error.message : undefined;
}

/** A value input for a parameter, by its type (its options as a list; a `multiple` one as a comma list). */
function ParameterInput({ def, value, onChange, error }: { def: ParameterDef; value: string; onChange: (value: string) => void; error?: string }) {
  const label = def.label || def.name;
  const common = { 'aria-label': label, size: 'xs' as const, error, required: def.required };
  if (def.options?.length && !def.multiple) return <Select {...common} data={def.options.map(String)} value={value || null} onChange={(v) => onChange(v ?? '')} clearable />;
  if (def.multiple) return <TextInput {...common} placeholder="Values, separated by commas" value={value} onChange={(e) => onChange(e.currentTarget.value)} />;
  switch (def.type) {
    case 'number':
    case 'integer':
      return <NumberInput {...common} allowDecimal={def.type === 'number'} value={value} onChange={(v) => onChange(String(v))} />;
    case 'boolean':
      return (
        <Select
          {...common}
          data={[
            { value: 'true', label: 'Yes' },
            { value: 'false', label: 'No' },
          ]}
          value={value || null}
          onChange={(v) => onChange(v ?? '')}
          clearable
        />
      );
    case 'date':
      return <TextInput {...common} type="date" value={value} onChange={(e) => onChange(e.currentTarget.value)} />;
    case 'datetime':
      return <TextInput {...common} type="datetime-local" value={value} onChange={(e) => onChange(e.currentTarget.value)} />;
    default:
      return <TextInput {...common} value={value} onChange={(e) => onChange(e.currentTarget.value)} />;
  }
}

/** A published version: its SQL and parameters as frozen. */
function VersionDialog({ queryId, version, onClose }: { queryId: string; version: number | undefined; onClose: () => void }) {
  const { team } = useSession();
  const detail = useQuery({
    queryKey: ['reporting-query-version', team?.id, queryId, version],
    queryFn: () => must(api.GET('/api/reporting/queries/{id}/versions/{version}', { params: { path: { id: queryId, version: String(version) } } })),
    enabled: version !== undefined,
  });
  const definition = detail.data?.definition as { text?: string; parameters?: ParameterDef[]; maxRows?: number; timeoutSeconds?: number } | undefined;
  return (
    <Modal opened={version !== undefined} onClose={onClose} title={`Version ${version ?? ''}`} size="lg">
      <Failure error={detail.error} />
      {detail.data && (
        <Stack gap="xs">
          <Text size="sm">
            Published {when(detail.data.publishedAt)}
            {detail.data.publishedBy ? ` by ${detail.data.publishedBy}` : ''}
            {detail.data.releaseNotes ? `: ${detail.data.releaseNotes}` : ''}
          </Text>
          <Code block>
            {definition?.text ?? ''}
          </Code>
          <Text size="sm">Parameters: {definition?.parameters?.length ? definition.parameters.map((p) => `${p.name} (${p.type}${p.required ? ', required' : ''})`).join(', ') : 'none'}</Text>
          <Text size="xs" c="dimmed">
            At most {definition?.maxRows?.toLocaleString()} rows, {definition?.timeoutSeconds} s.
          </Text>
        </Stack>
      )}
    </Modal>
  );
}
