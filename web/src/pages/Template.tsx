import { Alert, Badge, Button, Code, Group, JsonInput, Modal, Paper, SegmentedControl, Stack, Text, Textarea, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { api, must } from '../api';
import { useSession } from '../session';

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
      <Generate id={id} formats={t.outputFormats} published={t.isPublished} />
      <Paper withBorder p="md" component="section" aria-label="Definition">
        <Title order={3} size="h4" mb="xs">
          Definition
        </Title>
        <Code block mah={400} style={{ overflow: 'auto' }}>
          {JSON.stringify({ schema: t.schema, variables: t.variables, constants: t.constants, calculatedVariables: t.calculatedVariables }, null, 2)}
        </Code>
      </Paper>
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

function Generate({ id, formats, published }: { id: string; formats: string[]; published: boolean }) {
  const location = useLocation();
  const navigate = useNavigate();
  const sample = (location.state as { sampleData?: unknown } | null)?.sampleData;
  const [format, setFormat] = useState(formats[0] ?? 'pdf');
  const [variables, setVariables] = useState(() => JSON.stringify(sample ?? {}, null, 2));
  const [invalid, setInvalid] = useState<string>();
  const generate = useMutation({
    mutationFn: (parsed: Record<string, unknown>) => must(api.POST('/api/documents/generate', { body: { templateId: id, format: format as 'pdf' | 'excel', variables: parsed } })),
    onSuccess: () => navigate('/documents'),
  });
  function submit() {
    let parsed: unknown;
    try {
      parsed = JSON.parse(variables);
    } catch {
      setInvalid('The variables are not valid JSON');
      return;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      setInvalid('The variables must be a JSON object');
      return;
    }
    setInvalid(undefined);
    generate.mutate(parsed as Record<string, unknown>);
  }
  return (
    <Paper withBorder p="md" component="section" aria-label="Generate a document">
      <Stack>
        <Title order={3} size="h4">
          Generate a document
        </Title>
        {!published && <Text size="sm" c="dimmed">Publish the template first: documents are made from its published version.</Text>}
        {generate.error && <Alert color="red" role="alert">{generate.error.message}</Alert>}
        {formats.length > 1 && <SegmentedControl aria-label="Format" data={formats.map((f) => ({ value: f, label: f.toUpperCase() }))} value={format} onChange={setFormat} />}
        <JsonInput label="Variables" value={variables} onChange={setVariables} autosize minRows={6} maxRows={20} error={invalid} formatOnBlur />
        <Group>
          <Button onClick={submit} loading={generate.isPending} disabled={!published}>
            Generate
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
