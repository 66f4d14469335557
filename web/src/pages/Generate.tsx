import { Alert, Anchor, Button, Checkbox, FileButton, Group, NumberInput, Paper, Progress, SegmentedControl, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import Papa from 'papaparse';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, must } from '../api';
import { JsonField } from '../JsonField';
import { Failure } from './controls';
import { NO_OUTPUT, OutputOptions, outputOf, type OutputState } from './OutputOptions';

/**
 * Generating from a template (docs/web.md "Generate"): one document from a form built from the
 * template's variables (filled in from the sample data) or from the sample data as it is, and a batch
 * from an uploaded CSV or JSON file, followed until every document of it has ended.
 */

export interface DeclaredVariable {
  name: string;
  type: string;
  required?: boolean;
  description?: string;
}

/** The largest file a batch is read from, in the browser (the API caps the batch itself too). */
const BATCH_FILE_MAX_BYTES = 5 * 1024 * 1024;

export function Generate({ id, formats, published, sample, declared }: { id: string; formats: string[]; published: boolean; sample?: Record<string, unknown>; declared: DeclaredVariable[] }) {
  const navigate = useNavigate();
  // A template that prints a PDF makes PNG pages too.
  const choices = formats.includes('pdf') ? [...formats, 'png'] : formats;
  const [format, setFormat] = useState(formats[0] ?? 'pdf');
  const [output, setOutput] = useState<OutputState>(NO_OUTPUT);
  const [from, setFrom] = useState<'Form' | 'Sample data'>(declared.length > 0 ? 'Form' : 'Sample data');
  const [values, setValues] = useState<Record<string, unknown>>();
  const [batchId, setBatchId] = useState<string>();
  const [fileError, setFileError] = useState<string>();
  const current = values ?? sample ?? {};
  const generate = useMutation({
    mutationFn: (variables: Record<string, unknown>) => must(api.POST('/api/documents/generate', { body: { templateId: id, format: format as 'pdf' | 'excel' | 'png', variables, output: outputOf(output, format, false) } })),
    onSuccess: () => navigate('/documents'),
  });
  const batch = useMutation({
    mutationFn: (documents: Array<{ variables: Record<string, unknown>; filename?: string }>) => must(api.POST('/api/documents/generate/batch', { body: { templateId: id, format: format as 'pdf' | 'excel' | 'png', documents, output: outputOf(output, format, true) } })),
    onSuccess: (created) => setBatchId(created.batchId),
  });
  const readFile = async (file: File | null) => {
    setFileError(undefined);
    if (!file) return;
    if (file.size > BATCH_FILE_MAX_BYTES) return setFileError(`The file is larger than ${BATCH_FILE_MAX_BYTES / 1024 / 1024} MB`);
    try {
      batch.mutate(documentsFrom(await file.text(), file.name, declared));
    } catch (err) {
      setFileError((err as Error).message);
    }
  };
  return (
    <Paper withBorder p="md" component="section" aria-label="Generate a document">
      <Stack>
        <Title order={3} size="h4">
          Generate a document
        </Title>
        {!published && <Text size="sm" c="dimmed">Publish the template first: documents are made from its published version.</Text>}
        <Failure error={generate.error} />
        {choices.length > 1 && <SegmentedControl aria-label="Format" data={choices.map((f) => ({ value: f, label: f.toUpperCase() }))} value={format} onChange={setFormat} />}
        {declared.length > 0 && <SegmentedControl aria-label="Variables from" data={['Form', 'Sample data']} value={from} onChange={(v) => setFrom(v as 'Form' | 'Sample data')} />}
        {from === 'Form' && (
          <Stack gap="xs">
            {declared.map((v) => (
              <VariableInput key={v.name} variable={v} value={current[v.name]} onChange={(next) => setValues({ ...current, [v.name]: next })} />
            ))}
          </Stack>
        )}
        <OutputOptions state={output} onChange={setOutput} format={format} certificates={[]} />
        <Group>
          <Button onClick={() => generate.mutate(from === 'Form' ? current : (sample ?? {}))} loading={generate.isPending} disabled={!published || (from === 'Sample data' && !sample)}>
            Generate
          </Button>
          <FileButton onChange={(file) => void readFile(file)} accept=".csv,.json,text/csv,application/json">
            {(props) => (
              <Button {...props} variant="light" disabled={!published} loading={batch.isPending}>
                Generate a batch from a file
              </Button>
            )}
          </FileButton>
        </Group>
        <Text size="xs" c="dimmed">
          A batch file is a CSV with a column per variable (a cell holding JSON, such as a list, is read as JSON; an empty cell gives no value; a column `filename` names the document), or a JSON array of variable objects.
        </Text>
        {(fileError || batch.error) && <Alert color="red" role="alert">{fileError ?? batch.error?.message}</Alert>}
        {batchId && <BatchProgress batchId={batchId} />}
      </Stack>
    </Paper>
  );
}

/** One variable's input, by its declared type; lists and objects as JSON. */
function VariableInput({ variable, value, onChange }: { variable: DeclaredVariable; value: unknown; onChange: (value: unknown) => void }) {
  const common = { label: variable.name, description: variable.description, withAsterisk: variable.required };
  switch (variable.type) {
    case 'number':
    case 'integer':
      return <NumberInput {...common} value={typeof value === 'number' ? value : typeof value === 'string' ? value : ''} allowDecimal={variable.type === 'number'} onChange={(v) => onChange(v === '' ? undefined : v)} />;
    case 'boolean':
      return <Checkbox label={variable.name} description={variable.description} checked={value === true || value === 'true'} onChange={(e) => onChange(e.currentTarget.checked)} />;
    case 'array':
    case 'object':
      return <JsonField label={variable.name} description={variable.description} required={variable.required} value={value} onChange={onChange} />;
    default:
      return <TextInput {...common} placeholder={variable.type === 'date' ? 'YYYY-MM-DD' : undefined} value={value === undefined || value === null ? '' : String(value)} onChange={(e) => onChange(e.currentTarget.value === '' ? undefined : e.currentTarget.value)} />;
  }
}


/** The documents of a batch file: CSV rows (a header of variable names) or a JSON array. */
function documentsFrom(text: string, name: string, declared: DeclaredVariable[]): Array<{ variables: Record<string, unknown>; filename?: string }> {
  const hasFilenameVariable = declared.some((v) => v.name === 'filename');
  if (/\.json$/i.test(name) || /^\s*\[/.test(text)) {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed) || parsed.some((row) => !row || typeof row !== 'object' || Array.isArray(row))) throw new Error('A JSON batch file is an array of objects, one per document');
    return (parsed as Record<string, unknown>[]).map((row) => ('variables' in row && typeof row.variables === 'object' ? (row as { variables: Record<string, unknown>; filename?: string }) : { variables: row }));
  }
  const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
  if (parsed.errors.length > 0) throw new Error(`The CSV file could not be read: ${parsed.errors[0].message} (row ${(parsed.errors[0].row ?? 0) + 2})`);
  return parsed.data.map((row) => {
    const variables: Record<string, unknown> = {};
    let filename: string | undefined;
    for (const [key, cell] of Object.entries(row)) {
      // An empty cell is a value not given: the variable's default applies (or it is missing, if required).
      if (cell === '') continue;
      if (key === 'filename' && !hasFilenameVariable) filename = cell;
      else variables[key] = /^\s*[[{]/.test(cell) ? parseJsonCell(cell) : cell;
    }
    return filename ? { variables, filename } : { variables };
  });
}

function parseJsonCell(cell: string): unknown {
  try {
    return JSON.parse(cell);
  } catch {
    return cell;
  }
}

/** A batch on its way: a bar and its counts, asked again every second until every document has ended. */
function BatchProgress({ batchId }: { batchId: string }) {
  const batch = useQuery({
    queryKey: ['batch', batchId],
    queryFn: () => must(api.GET('/api/documents/batches/{batchId}', { params: { path: { batchId } } })),
    refetchInterval: (query) => {
      const b = query.state.data;
      return b && b.completedJobs + b.failedJobs + b.cancelledJobs >= b.totalJobs ? false : 1000;
    },
  });
  const b = batch.data;
  if (!b) return null;
  const ended = b.completedJobs + b.failedJobs + b.cancelledJobs;
  return (
    <section aria-label="Batch">
      <Stack gap={4}>
        <Progress value={b.totalJobs ? (ended / b.totalJobs) * 100 : 0} aria-label="Batch progress" />
        <Text size="sm" role="status">
          {ended} of {b.totalJobs} ended: {b.completedJobs} completed, {b.failedJobs} failed
        </Text>
        <Anchor component={Link} to="/documents">
          See the documents
        </Anchor>
      </Stack>
    </section>
  );
}
