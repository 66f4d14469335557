import { Alert, Badge, Button, Grid, Group, Modal, Paper, SegmentedControl, Stack, Text, Textarea, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, must } from '../api';
import { useSession } from '../session';
import { DefinitionEditor } from './DefinitionEditor';

import { PreviewPanel, SampleDataPanel, useSampleData } from './workbench';

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
        <Group>
          <Button component={Link} to={`/templates/${id}/design`} variant="light">
            {canEdit ? 'Open the designer' : 'View in the designer'}
          </Button>
          {canEdit && <Publish id={id} />}
        </Group>
      </Group>
      {t.description && <Text c="dimmed">{t.description}</Text>}
      <Workbench id={id} canEdit={canEdit} formats={t.outputFormats} published={t.isPublished} revision={t.updatedAt} calculated={((t.calculatedVariables ?? []) as { name: string }[]).map((c) => c.name)} />
      {/* Keyed by the revision: a saved draft (or another tab's) starts the editor from what is stored. */}
      <DefinitionEditor key={t.updatedAt} id={id} canEdit={canEdit} definition={{ schema: t.schema, variables: t.variables, constants: t.constants, calculatedVariables: t.calculatedVariables }} />
    </Stack>
  );
}

export function Publish({ id }: { id: string }) {
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
 * The sample data (the example's, when the template was started from one) drives the live preview
 * of the saved draft; the same data generates a document.
 */
function Workbench({ id, canEdit, formats, published, revision, calculated }: { id: string; canEdit: boolean; formats: string[]; published: boolean; revision: string; calculated: string[] }) {
  const sample = useSampleData(id, canEdit);
  return (
    <Grid gap="lg">
      <Grid.Col span={{ base: 12, lg: 5 }}>
        <Stack>
          <SampleDataPanel sample={sample} id={id} revision={revision} calculated={calculated} />
          <Generate id={id} formats={formats} published={published} variables={sample.value} />
        </Stack>
      </Grid.Col>
      <Grid.Col span={{ base: 12, lg: 7 }}>
        <PreviewPanel id={id} formats={formats} revision={revision} variables={sample.debounced} />
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
