import { Alert, Anchor, Button, Checkbox, Code, Group, Loader, Paper, SegmentedControl, Select, SimpleGrid, Stack, Switch, Table, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../../../api';
import { saveAnswer } from '../../../download';
import { JsonField } from '../../../JsonField';
import { useSession } from '../../../session';
import { ConfirmButton, when } from '../../controls';
import { call, ProblemAlert } from './problems';
import { useCanWrite, useQueryObjects, type Report } from './shared';

const PdfPreview = lazy(() => import('../../../preview/PdfPreview'));

type Format = 'pdf' | 'excel' | 'csv';
const FORMATS: Array<{ value: Format; label: string }> = [
  { value: 'pdf', label: 'PDF' },
  { value: 'excel', label: 'Excel' },
  { value: 'csv', label: 'CSV' },
];

/** The project's reports: each one's template, datasets, outputs and where publishing has got to. */
export function ReportsPage() {
  const { team } = useSession();
  const { canWrite } = useCanWrite();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  const reports = useQuery({
    queryKey: ['reporting-reports', team?.id, search],
    queryFn: () => call(api.GET('/api/reporting/reports', { params: { query: { limit: 100, page: 1, search, sortBy: 'name', sortOrder: 'asc' } } })),
    enabled: !!team,
  });
  const remove = useMutation({
    mutationFn: async (id: string) => {
      const { error, response } = await api.DELETE('/api/reporting/reports/{id}', { params: { path: { id } } });
      if (error !== undefined || !response.ok) await call(Promise.resolve({ error }));
    },
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-reports'] }),
  });
  const run = useMutation({
    mutationFn: (id: string) => call(api.POST('/api/reporting/reports/{id}/runs', { params: { path: { id } }, body: {} })),
    onSuccess: (accepted) => navigate(`/reporting/runs/${accepted.runId}`),
  });
  const list = reports.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Reports</Title>
        {canWrite && (
          <Button component={Link} to="/reporting/reports/new">
            New report
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        A report puts the rows of published queries into a template and makes PDF, Excel or CSV files. Publish it to run it and to schedule it.
      </Text>
      <TextInput label="Search reports" placeholder="Name contains…" value={search} onChange={(e) => setSearch(e.currentTarget.value)} maw={320} />
      <ProblemAlert error={reports.error ?? remove.error ?? run.error} />
      {reports.data && list.length === 0 && <Text c="dimmed">No reports yet.</Text>}
      {list.length > 0 && (
        <Table aria-label="Reports">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Datasets</Table.Th>
              <Table.Th>Outputs</Table.Th>
              <Table.Th>Published</Table.Th>
              <Table.Th>Changed</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/reporting/reports/${r.id}`}>
                    {r.name}
                  </Anchor>
                  {r.description && (
                    <Text size="xs" c="dimmed">
                      {r.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{r.datasets.map((d) => d.name).join(', ')}</Table.Td>
                <Table.Td>{r.outputs.map((o) => o.format.toUpperCase()).join(', ')}</Table.Td>
                <Table.Td>{r.latestVersion > 0 ? `version ${r.latestVersion}` : 'draft only'}</Table.Td>
                <Table.Td>{when(r.updatedAt)}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    {canWrite && r.latestVersion > 0 && (
                      <Button size="compact-sm" variant="default" aria-label={`Run ${r.name}`} loading={run.isPending && run.variables === r.id} onClick={() => run.mutate(r.id)}>
                        Run
                      </Button>
                    )}
                    {canWrite && (
                      <ConfirmButton label="Delete" name={`Delete ${r.name}`} title="Delete the report?" confirm="Delete" onConfirm={() => remove.mutate(r.id)}>
                        {r.name} goes; its past runs stay listed. A report a schedule runs cannot be deleted.
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
  );
}

interface DatasetForm {
  name: string;
  queryId: string | null;
  shape: 'rows' | 'first_row' | 'value';
  bindTo: string;
  parameters: Record<string, string>;
}

interface ReportForm {
  name: string;
  description: string;
  templateId: string | null;
  datasets: DatasetForm[];
  parameters: unknown;
  outputs: Format[];
  filenamePattern: string;
  skipIfEmpty: boolean;
  useCredit: boolean;
}

const emptyDataset = (n: number): DatasetForm => ({ name: n === 0 ? 'items' : `dataset${n + 1}`, queryId: null, shape: 'rows', bindTo: '', parameters: {} });

function formOf(r: Report | undefined): ReportForm {
  if (!r) return { name: '', description: '', templateId: null, datasets: [emptyDataset(0)], parameters: [], outputs: ['pdf'], filenamePattern: '', skipIfEmpty: false, useCredit: false };
  return {
    name: r.name,
    description: r.description ?? '',
    templateId: r.templateId,
    datasets: r.datasets.map((d) => ({
      name: d.name,
      queryId: d.queryId,
      shape: d.shape,
      bindTo: d.bindTo ?? '',
      parameters: Object.fromEntries(Object.entries(d.parameters).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
    })),
    parameters: r.parameters,
    outputs: r.outputs.map((o) => o.format),
    filenamePattern: r.filenamePattern,
    skipIfEmpty: r.skipIfEmpty,
    useCredit: r.useCredit,
  };
}

/** A mapping's text as the API takes it: `{{param}}` and text stay text; numbers, booleans, null and lists as JSON. */
function mappingValue(text: string): unknown {
  if (/^\s*(-?\d+(\.\d+)?|true|false|null|\[.*\])\s*$/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function bodyOf(f: ReportForm) {
  return {
    name: f.name,
    description: f.description.trim() || null,
    templateId: f.templateId,
    datasets: f.datasets.map((d) => ({
      name: d.name,
      queryId: d.queryId ?? '',
      shape: d.shape,
      ...(d.bindTo.trim() ? { bindTo: d.bindTo.trim() } : {}),
      parameters: Object.fromEntries(Object.entries(d.parameters).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, mappingValue(v)])),
    })),
    parameters: Array.isArray(f.parameters) ? f.parameters : [],
    outputs: f.outputs.map((format) => ({ format })),
    ...(f.filenamePattern.trim() ? { filenamePattern: f.filenamePattern.trim() } : {}),
    skipIfEmpty: f.skipIfEmpty,
    useCredit: f.useCredit,
  };
}

/** Create or edit a report: its datasets from published queries, the template, the output formats; publish; preview the draft. */
export function ReportEditor() {
  const { id } = useParams();
  const { team } = useSession();
  const report = useQuery({
    queryKey: ['reporting-report', team?.id, id],
    queryFn: () => call(api.GET('/api/reporting/reports/{id}', { params: { path: { id: id! } } })),
    enabled: !!team && !!id,
  });
  if (id && !report.data) {
    return report.error ? <ProblemAlert error={report.error} /> : <Loader aria-label="Loading the report" />;
  }
  return <ReportForm key={report.data?.updatedAt ?? 'new'} report={report.data} />;
}

function ReportForm({ report }: { report: Report | undefined }) {
  const { team } = useSession();
  const { canWrite } = useCanWrite();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [form, setForm] = useState<ReportForm>(() => formOf(report));
  const [releaseNotes, setReleaseNotes] = useState('');
  const set = (patch: Partial<ReportForm>) => setForm((f) => ({ ...f, ...patch }));
  const setDataset = (i: number, patch: Partial<DatasetForm>) => setForm((f) => ({ ...f, datasets: f.datasets.map((d, j) => (j === i ? { ...d, ...patch } : d)) }));
  const templates = useQuery({
    queryKey: ['templates', team?.id, 'published'],
    queryFn: () => call(api.GET('/api/templates', { params: { query: { limit: 100 } } })),
    enabled: !!team,
  });
  const queryObjects = useQueryObjects();
  const save = useMutation({
    mutationFn: () =>
      report
        ? call(api.PATCH('/api/reporting/reports/{id}', { params: { path: { id: report.id } }, body: bodyOf(form) as never }))
        : call(api.POST('/api/reporting/reports', { body: bodyOf(form) as never })),
    onSuccess: async (saved) => {
      await queries.invalidateQueries({ queryKey: ['reporting-reports'] });
      queries.setQueryData(['reporting-report', team?.id, saved.id], saved);
      if (!report) void navigate(`/reporting/reports/${saved.id}`, { replace: true });
    },
  });
  const publish = useMutation({
    mutationFn: () => call(api.POST('/api/reporting/reports/{id}/publish', { params: { path: { id: report!.id } }, body: releaseNotes.trim() ? { releaseNotes } : {} })),
    onSuccess: async () => {
      setReleaseNotes('');
      await queries.invalidateQueries({ queryKey: ['reporting-report'] });
      await queries.invalidateQueries({ queryKey: ['reporting-reports'] });
    },
  });
  const templateChoices = (templates.data?.data ?? []).filter((t) => t.isPublished).map((t) => ({ value: t.id, label: t.name }));
  const queryChoices = (queryObjects.data ?? []).map((q) => ({ value: q.id, label: q.latestVersion > 0 ? q.name : `${q.name} (not published)` }));
  const saved = report && JSON.stringify(bodyOf(formOf(report))) === JSON.stringify(bodyOf(form));
  return (
    <Stack>
      <div>
        <Anchor component={Link} to="/reporting/reports" size="sm">
          Reports
        </Anchor>
        <Title order={2}>{report ? report.name : 'New report'}</Title>
        {report && (
          <Text size="sm" c="dimmed">
            {report.latestVersion > 0 ? `Published version ${report.latestVersion} (${when(report.publishedAt)})` : 'Not published yet'}
            {saved ? '' : ' · unsaved changes'}
          </Text>
        )}
      </div>
      {report && report.outdatedDependencies.length > 0 && (
        <Alert color="yellow" title="Newer versions to pick up">
          {report.outdatedDependencies.map((d) => `${d.type} ${d.name}: version ${d.pinnedVersion} pinned, ${d.latestVersion} published`).join('; ')}. Publishing again picks them up.
        </Alert>
      )}
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <ProblemAlert error={save.error} title="Not saved" />
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <TextInput label="Name" required maxLength={100} value={form.name} onChange={(e) => set({ name: e.currentTarget.value })} readOnly={!canWrite} />
            <Select
              label="Template"
              description="A published template; none for CSV files only"
              placeholder="None (CSV only)"
              clearable
              searchable
              data={templateChoices}
              value={form.templateId}
              onChange={(v) => set({ templateId: v, outputs: v ? form.outputs : ['csv'] })}
              readOnly={!canWrite}
            />
          </SimpleGrid>
          <Textarea label="Description" maxLength={1000} autosize minRows={1} value={form.description} onChange={(e) => set({ description: e.currentTarget.value })} readOnly={!canWrite} />
          <Paper withBorder p="md" component="section" aria-label="Datasets">
            <Stack>
              <Title order={3} size="h4">
                Datasets
              </Title>
              <Text size="sm" c="dimmed">
                Each dataset is a published query&apos;s rows, given to the template as a variable (its name, or &quot;Template variable&quot;). A query parameter takes a
                report parameter as <Code>{'{{name}}'}</Code>, or a value.
              </Text>
              {form.datasets.map((d, i) => {
                const chosen = queryObjects.data?.find((q) => q.id === d.queryId);
                return (
                  <Paper key={i} withBorder p="sm" component="fieldset" aria-label={`Dataset ${i + 1}`}>
                    <SimpleGrid cols={{ base: 1, md: 4 }}>
                      <TextInput label={`Dataset ${i + 1} name`} required value={d.name} onChange={(e) => setDataset(i, { name: e.currentTarget.value })} readOnly={!canWrite} />
                      <Select label={`Dataset ${i + 1} query`} required searchable data={queryChoices} value={d.queryId} onChange={(v) => setDataset(i, { queryId: v })} readOnly={!canWrite} />
                      <Select
                        label={`Dataset ${i + 1} shape`}
                        data={[
                          { value: 'rows', label: 'Rows (a list)' },
                          { value: 'first_row', label: 'First row (an object)' },
                          { value: 'value', label: 'One value' },
                        ]}
                        value={d.shape}
                        allowDeselect={false}
                        onChange={(v) => setDataset(i, { shape: (v ?? 'rows') as DatasetForm['shape'] })}
                        readOnly={!canWrite}
                      />
                      <TextInput label={`Dataset ${i + 1} template variable`} placeholder={d.name} value={d.bindTo} onChange={(e) => setDataset(i, { bindTo: e.currentTarget.value })} readOnly={!canWrite} />
                    </SimpleGrid>
                    {(chosen?.parameters ?? []).length > 0 && (
                      <SimpleGrid cols={{ base: 1, md: 3 }} mt="xs">
                        {chosen!.parameters!.map((p) => (
                          <TextInput
                            key={p.name}
                            label={`${p.name} of dataset ${i + 1}`}
                            placeholder={`{{${p.name}}} or a value; empty: the query's default`}
                            value={d.parameters[p.name] ?? ''}
                            onChange={(e) => {
                              const value = e.currentTarget.value;
                              setDataset(i, { parameters: { ...d.parameters, [p.name]: value } });
                            }}
                            readOnly={!canWrite}
                          />
                        ))}
                      </SimpleGrid>
                    )}
                    {canWrite && form.datasets.length > 1 && (
                      <Button mt="xs" size="compact-sm" variant="subtle" color="red" aria-label={`Remove dataset ${i + 1}`} onClick={() => set({ datasets: form.datasets.filter((_, j) => j !== i) })}>
                        Remove
                      </Button>
                    )}
                  </Paper>
                );
              })}
              {canWrite && form.datasets.length < 10 && (
                <Group>
                  <Button variant="default" size="xs" onClick={() => set({ datasets: [...form.datasets, emptyDataset(form.datasets.length)] })}>
                    Add a dataset
                  </Button>
                </Group>
              )}
            </Stack>
          </Paper>
          <JsonField
            label="Report parameters"
            description='What a run asks for, e.g. [{"name": "min", "type": "number", "default": 0}]; passed to the template when it has a variable of that name'
            value={form.parameters}
            onChange={(v) => set({ parameters: v ?? [] })}
            readOnly={!canWrite}
          />
          <Checkbox.Group label="Output formats" description="PDF and Excel need a template; CSV writes each dataset's rows" value={form.outputs} onChange={(v) => set({ outputs: v as Format[] })}>
            <Group mt="xs">
              {FORMATS.map((f) => (
                <Checkbox key={f.value} value={f.value} label={f.label} disabled={!canWrite || (f.value !== 'csv' && !form.templateId)} />
              ))}
            </Group>
          </Checkbox.Group>
          <SimpleGrid cols={{ base: 1, md: 3 }}>
            <TextInput label="File name pattern" placeholder="{slug}-{scheduledFor:yyyy-MM-dd}" value={form.filenamePattern} onChange={(e) => set({ filenamePattern: e.currentTarget.value })} readOnly={!canWrite} />
            <Switch label="Skip scheduled runs without rows" checked={form.skipIfEmpty} onChange={(e) => set({ skipIfEmpty: e.currentTarget.checked })} disabled={!canWrite} mt="lg" />
            <Switch label="Use credits (no watermark)" checked={form.useCredit} onChange={(e) => set({ useCredit: e.currentTarget.checked })} disabled={!canWrite} mt="lg" />
          </SimpleGrid>
          {canWrite && (
            <Group>
              <Button type="submit" loading={save.isPending} disabled={!form.name.trim() || form.outputs.length === 0}>
                {report ? 'Save' : 'Create report'}
              </Button>
            </Group>
          )}
        </Stack>
      </form>
      {report && canWrite && (
        <Paper withBorder p="md" component="section" aria-label="Publish">
          <Stack>
            <Title order={3} size="h4">
              Publish
            </Title>
            <Text size="sm" c="dimmed">
              Runs and schedules use the newest published version, with the template and query versions it pins.
            </Text>
            <ProblemAlert error={publish.error} title="Not published" />
            {publish.data && (
              <Alert color="green" role="status">
                Published version {publish.data.version}.
              </Alert>
            )}
            <Group align="end">
              <TextInput label="Release notes" value={releaseNotes} onChange={(e) => setReleaseNotes(e.currentTarget.value)} flex={1} />
              <Button onClick={() => publish.mutate()} loading={publish.isPending} disabled={!saved}>
                Publish
              </Button>
            </Group>
          </Stack>
        </Paper>
      )}
      {report && canWrite && <ReportPreview report={report} />}
    </Stack>
  );
}

/** The saved draft rendered as a file without a run (the API's report preview): the PDF page by page, a CSV as text. */
function ReportPreview({ report }: { report: Report }) {
  const formats = [...new Set(report.outputs.map((o) => o.format))] as Format[];
  const [format, setFormat] = useState<Format>(formats[0] ?? 'pdf');
  const [parameters, setParameters] = useState<unknown>({});
  const preview = useMutation({
    mutationFn: async () => {
      const { data, error, response } = await api.POST('/api/reporting/reports/{id}/preview', {
        params: { path: { id: report.id } },
        body: { format, parameters: (parameters ?? {}) as Record<string, never> },
        parseAs: 'arrayBuffer',
      });
      if (error !== undefined || !data) await call(Promise.resolve({ error }));
      return { format, bytes: data as unknown as ArrayBuffer, response };
    },
  });
  const shown = preview.data;
  return (
    <Paper withBorder component="section" aria-label="Preview" p="md">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Preview
          </Title>
          {preview.isPending && <Loader size="sm" aria-label="Rendering the preview" />}
        </Group>
        <Text size="sm" c="dimmed">
          The saved draft with its queries run now (at most 1,000 rows each); PDFs are watermarked. Nothing is stored or charged.
        </Text>
        <Group align="end">
          {formats.length > 1 && (
            <SegmentedControl aria-label="Preview format" value={format} onChange={(v) => setFormat(v as Format)} data={FORMATS.filter((f) => formats.includes(f.value))} />
          )}
          <div style={{ flex: 1, minWidth: 240 }}>
            <JsonField label="Parameter values" description="The report parameters' values for the preview, as JSON" value={parameters} onChange={setParameters} />
          </div>
          <Button onClick={() => preview.mutate()} loading={preview.isPending}>
            Preview
          </Button>
        </Group>
        <ProblemAlert error={preview.error} title="The preview could not be made" />
        {shown?.format === 'pdf' && (
          <Suspense fallback={<Loader aria-label="Loading the preview" />}>
            <PdfPreview pdf={shown.bytes} />
          </Suspense>
        )}
        {shown?.format === 'csv' && (
          <section aria-label="CSV preview">
            <Code block style={{ whiteSpace: 'pre-wrap' }}>
              {new TextDecoder().decode(shown.bytes)}
            </Code>
          </section>
        )}
        {shown?.format === 'excel' && (
          <Group>
            <Text size="sm">The workbook is ready.</Text>
            <Button variant="default" onClick={() => saveAnswer(new Blob([shown.bytes]), shown.response, `${report.slug}-preview.xlsx`)}>
              Download the workbook
            </Button>
          </Group>
        )}
      </Stack>
    </Paper>
  );
}
