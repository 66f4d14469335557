import { Alert, Code, Group, JsonInput, Loader, Paper, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import { useLocation } from 'react-router';
import { api, errorText, must } from '../api';

/**
 * The sample data and the live preview, shared by a template's page and its designer (docs/web.md
 * "Live preview"): the real renderer's PDF of the saved draft with the sample data, fetched at once
 * for the first change after a pause and 0.3 s after the last keystroke of a burst of typing.
 */

// pdf.js and its styles load with the first preview, not with the app.
const PdfPreview = lazy(() => import('../preview/PdfPreview'));
const WorkbookGrid = lazy(() => import('../preview/WorkbookGrid'));

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

/** The tab's sample data per template: kept while the person moves between the template's pages. */
const kept = new Map<string, string>();

export interface SampleData {
  text: string;
  setText(text: string): void;
  /** The data now, when it is a JSON object. */
  value?: Record<string, unknown>;
  error?: string;
  /** The data the preview shows: after a pause in typing. */
  debounced?: Record<string, unknown>;
}

/**
 * The template's sample data: kept with the template (GET/PUT /api/templates/:id/sample-data), so
 * whoever opens it next previews with it; a member's edits are saved a second after the typing pauses.
 */
export function useSampleData(id: string, canEdit: boolean): SampleData {
  const location = useLocation();
  const given = (location.state as { sampleData?: unknown } | null)?.sampleData;
  const [text, setState] = useState<string | undefined>(() => kept.get(id) ?? (given === undefined ? undefined : JSON.stringify(given, null, 2)));
  const stored = useQuery({
    queryKey: ['sample-data', id],
    queryFn: async () => (await must(api.GET('/api/templates/{id}/sample-data', { params: { path: { id } } }))).data,
    enabled: text === undefined,
    staleTime: Infinity,
  });
  const shown = text ?? (stored.data ? JSON.stringify(stored.data, null, 2) : undefined);
  const setText = (next: string) => {
    kept.set(id, next);
    setState(next);
  };
  // The first change after a pause previews at once; a burst of typing then waits for a pause.
  const [debounced] = useDebouncedValue(shown ?? '', 300, { leading: true });
  const [settled] = useDebouncedValue(text, 1000);
  useEffect(() => {
    if (!canEdit || settled === undefined) return;
    const value = parseSample(settled).value;
    if (value) void api.PUT('/api/templates/{id}/sample-data', { params: { path: { id } }, body: { data: value } });
  }, [settled, canEdit, id]);
  const parsed = parseSample(shown ?? '{}');
  return { text: shown ?? '', setText, value: shown === undefined ? undefined : parsed.value, error: shown === undefined ? undefined : parsed.error, debounced: debounced ? parseSample(debounced).value : undefined };
}

/**
 * The sample data, and under it each calculated variable of the saved draft with the value it takes
 * from that data (POST /api/templates/:id/calculate: the evaluation workers, the render's budget).
 */
export function SampleDataPanel({ sample, maxRows = 24, id, revision, calculated }: { sample: SampleData; maxRows?: number; id: string; revision: string; calculated: string[] }) {
  return (
    <Paper withBorder p="md" component="section" aria-label="Sample data">
      <Stack>
        <JsonInput label="Sample data" description="The variables the preview and a generated document use" value={sample.text} onChange={sample.setText} autosize minRows={8} maxRows={maxRows} error={sample.error} />
        {calculated.length > 0 && <CalculatedValues id={id} revision={revision} variables={sample.debounced} names={calculated} />}
      </Stack>
    </Paper>
  );
}

function CalculatedValues({ id, revision, variables, names }: { id: string; revision: string; variables?: Record<string, unknown>; names: string[] }) {
  const values = useQuery({
    queryKey: ['calculate', id, revision, variables],
    queryFn: async () => {
      const { data, error } = await api.POST('/api/templates/{id}/calculate', { params: { path: { id } }, body: { variables: variables! } });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return data.values;
    },
    enabled: !!variables,
    placeholderData: keepPreviousData,
  });
  return (
    <section aria-label="Calculated values">
      <Title order={4} size="h6" mb={4}>
        Calculated values
      </Title>
      {values.error ? (
        <Text size="sm" c="red" role="status">
          {values.error.message}
        </Text>
      ) : (
        <Table withRowBorders={false} verticalSpacing={2}>
          <Table.Tbody>
            {names.map((name) => (
              <Table.Tr key={name}>
                <Table.Th scope="row" fw={500}>
                  {name}
                </Table.Th>
                <Table.Td>
                  <Code>{values.data && name in values.data ? JSON.stringify(values.data[name]) : '…'}</Code>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </section>
  );
}

/** Retries a preview the budget paused, as often and as late as the answers say. */
const previewRetry = {
  retry: (failures: number, error: Error) => error instanceof PreviewPaused && failures < 5,
  retryDelay: (_failures: number, error: Error) => (error instanceof PreviewPaused ? error.retryAfterSeconds * 1000 : 0),
};

/** A 429 from the preview budget as PreviewPaused; any other refusal as an Error with the API's message. */
function previewError(response: Response, error: unknown): Error {
  if (response.status === 429) return new PreviewPaused(errorText(error), Number(response.headers.get('Retry-After')) || 10);
  return new Error(errorText(error));
}

/**
 * The preview of the template's saved draft (`revision` is its `updatedAt`: a new draft, a new
 * preview): the PDF page by page, or for `excel` the workbook as a grid; a template with both
 * formats offers "PDF" and "Workbook".
 */
export function PreviewPanel({ id, formats, revision, variables }: { id: string; formats: string[]; revision: string; variables?: Record<string, unknown> }) {
  const [chosen, choose] = useState<string>(formats.includes('pdf') ? 'pdf' : 'excel');
  const shown = formats.includes(chosen) ? chosen : formats[0];
  const pdf = useQuery({
    queryKey: ['preview', id, revision, variables],
    queryFn: async () => {
      const { data, error, response } = await api.POST('/api/templates/{id}/preview', { params: { path: { id } }, body: { variables: variables!, format: 'pdf' }, parseAs: 'arrayBuffer' });
      if (error !== undefined || !data) throw previewError(response, error);
      // The client types the body as the document describes it (a string); parseAs gives the bytes.
      return data as unknown as ArrayBuffer;
    },
    enabled: shown === 'pdf' && !!variables,
    placeholderData: keepPreviousData,
    // The project's preview budget (PREVIEW_RATE_LIMIT_PER_MINUTE) ran out: wait as the answer says, then ask again.
    ...previewRetry,
  });
  const grid = useQuery({
    queryKey: ['preview-grid', id, revision, variables],
    queryFn: async () => {
      const { data, error, response } = await api.POST('/api/templates/{id}/preview/grid', { params: { path: { id } }, body: { variables: variables! } });
      if (error !== undefined || !data) throw previewError(response, error);
      return data;
    },
    enabled: shown === 'excel' && !!variables,
    placeholderData: keepPreviousData,
    ...previewRetry,
  });
  const preview = shown === 'pdf' ? pdf : grid;
  const paused = preview.failureReason instanceof PreviewPaused ? preview.failureReason : undefined;
  return (
    <Paper withBorder component="section" aria-label="Preview" aria-busy={preview.isFetching}>
      <Group justify="space-between" p="sm">
        <Title order={3} size="h4">
          Preview
        </Title>
        <Group gap="sm">
          {preview.isFetching && <Loader size="sm" aria-label="Updating the preview" />}
          {formats.length > 1 && (
            <SegmentedControl
              size="xs"
              aria-label="Preview format"
              value={shown}
              onChange={choose}
              data={[
                { value: 'pdf', label: 'PDF' },
                { value: 'excel', label: 'Workbook' },
              ]}
            />
          )}
        </Group>
      </Group>
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
      <Suspense fallback={<Loader m="sm" aria-label="Loading the preview" />}>
        {shown === 'pdf' && pdf.data && <PdfPreview pdf={pdf.data} />}
        {shown === 'excel' && grid.data && <WorkbookGrid grid={grid.data} />}
      </Suspense>
    </Paper>
  );
}
