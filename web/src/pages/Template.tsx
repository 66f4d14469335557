import { Alert, Badge, Button, Grid, Group, JsonInput, Loader, Modal, Paper, SegmentedControl, Stack, Text, Textarea, Title } from '@mantine/core';
import { useDebouncedValue, useDisclosure } from '@mantine/hooks';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { api, errorText, must } from '../api';
import { useSession } from '../session';
import { DefinitionEditor } from './DefinitionEditor';

// pdf.js and its styles load with the first preview, not with the app.
const PdfPreview = lazy(() => import('../preview/PdfPreview'));

/** A 429 from the preview budget (ERR_LIMIT_014): the preview waits and asks again. */
class PreviewPaused extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** The sample data as an object, or why it is not one. */
function parseSample(text: string): { value?: Record<string, unknown>; error?: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'The sample data must be a JSON object' };
    return { value: value as Record<string, unknown> };
  } catch {
    return { error: 'The sample data is not valid JSON' };
  }
}

/** A template: its state, publishing, and generating a document from it with variables written as JSON. */
export function TemplatePage() {
  const { id = '' } = useParams();
  const { team } = useSession();
  const canEdit = team?.role !== 'viewer';
  const template = useQuery({ queryKey: ['template', id], queryFn: () => must(api.GET('/api/templates/{id}', { params: { path: { id } } })), enabled: !!team });
  if (template.error) return <Alert color="red" role="alert">{template.error.message}</Alert>;
  if (!template.data) return null;
  const t = template.data;
  return (
    <Stack>
      <Group justify="space-between">
        <Group>
          <Title order={2}>{t.name}</Title>
          {t.isPublished ? <Badge color="green">published v{t.latestVersion}</Badge> : <Badge color="gray">draft</Badge>}
        </Group>
        {canEdit && <Publish id={id} />}
      </Group>
      {t.description && <Text c="dimmed">{t.description}</Text>}
      <Workbench id={id} formats={t.outputFormats} published={t.isPublished} revision={t.updatedAt} />
      {/* Keyed by the revision: a saved draft (or another tab's) starts the editor from what is stored. */}
      <DefinitionEditor key={t.updatedAt} id={id} canEdit={canEdit} definition={{ schema: t.schema, variables: t.variables, constants: t.constants, calculatedVariables: t.calculatedVariables }} />
    </Stack>
  );
}

function Publish({ id }: { id: string }) {
  const [opened, { open, close }] = useDisclosure(false);
  const [notes, setNotes] = useState('');
  const queries = useQueryClient();
  const publish = useMutation({
    mutationFn: () => must(api.POST('/api/templates/{id}/publish', { params: { path: { id } }, body: notes ? { releaseNotes: notes } : {} })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['template', id] });
      await queries.invalidateQueries({ queryKey: ['templates'] });
      close();
    },
  });
  return (
    <>
      <Button onClick={open}>Publish</Button>
      <Modal opened={opened} onClose={close} title="Publish a new version">
        <Stack>
          {publish.error && <Alert color="red" role="alert">{publish.error.message}</Alert>}
          <Textarea label="Release notes" value={notes} onChange={(e) => setNotes(e.currentTarget.value)} autosize minRows={3} />
          <Button onClick={() => publish.mutate()} loading={publish.isPending}>
            Publish version
          </Button>
        </Stack>
      </Modal>
    </>
  );
}

/**
 * The sample data (the example's, when the template was started from one) drives the live preview,
 * the real renderer's PDF of the draft, at once after a pause, else 0.3 s after the last keystroke; the same data
 * generates a document.
 */
function Workbench({ id, formats, published, revision }: { id: string; formats: string[]; published: boolean; revision: string }) {
  const location = useLocation();
  const sample = (location.state as { sampleData?: unknown } | null)?.sampleData;
  const [text, setText] = useState(() => JSON.stringify(sample ?? {}, null, 2));
  // The first change after a pause previews at once; a burst of typing then waits for a pause.
  const [debounced] = useDebouncedValue(text, 300, { leading: true });
  const parsed = parseSample(text);
  const previewed = parseSample(debounced);
  const pdf = formats.includes('pdf');
  const preview = useQuery({
    queryKey: ['preview', id, revision, debounced],
    queryFn: async () => {
      const { data, error, response } = await api.POST('/api/templates/{id}/preview', { params: { path: { id } }, body: { variables: previewed.value!, format: 'pdf' }, parseAs: 'arrayBuffer' });
      if (response.status === 429) {
        throw new PreviewPaused(errorText(error), Number(response.headers.get('Retry-After')) || 10);
      }
      if (error !== undefined || !data) throw new Error(errorText(error));
      // The client types the body as the document describes it (a string); parseAs gives the bytes.
      return data as unknown as ArrayBuffer;
    },
    enabled: pdf && !!previewed.value,
    placeholderData: keepPreviousData,
    // The project's preview budget (PREVIEW_RATE_LIMIT_PER_MINUTE) ran out: wait as the answer says, then ask again.
    retry: (failures, error) => error instanceof PreviewPaused && failures < 5,
    retryDelay: (_failures, error) => (error instanceof PreviewPaused ? error.retryAfterSeconds * 1000 : 0),
  });
  const paused = preview.failureReason instanceof PreviewPaused ? preview.failureReason : undefined;
  return (
    <Grid gap="lg">
      <Grid.Col span={{ base: 12, lg: 5 }}>
        <Stack>
          <Paper withBorder p="md" component="section" aria-label="Sample data">
            <JsonInput label="Sample data" description="The variables the preview and a generated document use" value={text} onChange={setText} autosize minRows={8} maxRows={24} error={parsed.error} />
          </Paper>
          <Generate id={id} formats={formats} published={published} variables={parsed.value} />
        </Stack>
      </Grid.Col>
      <Grid.Col span={{ base: 12, lg: 7 }}>
        <Paper withBorder component="section" aria-label="Preview" aria-busy={preview.isFetching}>
          <Group justify="space-between" p="sm">
            <Title order={3} size="h4">
              Preview
            </Title>
            {preview.isFetching && <Loader size="sm" aria-label="Updating the preview" />}
          </Group>
          {!pdf && <Text p="sm" c="dimmed">This template makes workbooks only.</Text>}
          {paused && !preview.error && (
            <Alert color="yellow" role="status" m="sm" title="The preview is paused">
              {paused.message}. It updates again in about {paused.retryAfterSeconds} s.
            </Alert>
          )}
          {preview.error && (
            <Alert color="red" role="alert" m="sm" title="The preview could not be rendered">
              {preview.error.message}
            </Alert>
          )}
          {preview.data && (
            <Suspense fallback={<Loader m="sm" aria-label="Loading the preview" />}>
              <PdfPreview pdf={preview.data} />
            </Suspense>
          )}
        </Paper>
      </Grid.Col>
    </Grid>
  );
}

function Generate({ id, formats, published, variables }: { id: string; formats: string[]; published: boolean; variables?: Record<string, unknown> }) {
  const navigate = useNavigate();
  const [format, setFormat] = useState(formats[0] ?? 'pdf');
  const generate = useMutation({
    mutationFn: (values: Record<string, unknown>) => must(api.POST('/api/documents/generate', { body: { templateId: id, format: format as 'pdf' | 'excel', variables: values } })),
    onSuccess: () => navigate('/documents'),
  });
  return (
    <Paper withBorder p="md" component="section" aria-label="Generate a document">
      <Stack>
        <Title order={3} size="h4">
          Generate a document
        </Title>
        {!published && <Text size="sm" c="dimmed">Publish the template first: documents are made from its published version.</Text>}
        {generate.error && <Alert color="red" role="alert">{generate.error.message}</Alert>}
        {formats.length > 1 && <SegmentedControl aria-label="Format" data={formats.map((f) => ({ value: f, label: f.toUpperCase() }))} value={format} onChange={setFormat} />}
        <Group>
          <Button onClick={() => variables && generate.mutate(variables)} loading={generate.isPending} disabled={!published || !variables}>
            Generate
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
