import { Alert, Badge, Button, Grid, Group, JsonInput, Modal, Paper, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, must } from '../api';
import { useSession } from '../session';
import { DefinitionEditor } from './DefinitionEditor';
import { Generate, type DeclaredVariable } from './Generate';
import { AutomationFields, TemplateAnalytics } from './TemplateInsights';
import { PreviewPanel, SampleDataPanel, useSampleData } from './workbench';
import { Failure } from './controls';

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
          {t.folderId && <Badge variant="outline">{`Folder: ${t.folderId}`}</Badge>}
        </Group>
        <Group>
          <Button component={Link} to={`/templates/${id}/design`} variant="light">
            {canEdit ? 'Open the designer' : 'View in the designer'}
          </Button>
          {canEdit && <Publish id={id} />}
        </Group>
      </Group>
      {t.description && <Text c="dimmed">{t.description}</Text>}
      <Workbench id={id} canEdit={canEdit} formats={t.outputFormats} published={t.isPublished} revision={t.updatedAt} calculated={((t.calculatedVariables ?? []) as { name: string }[]).map((c) => c.name)} declared={(t.variables ?? []) as DeclaredVariable[]} />
      <Versions id={id} canEdit={canEdit} latest={t.latestVersion ?? 0} />
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <TemplateAnalytics id={id} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <AutomationFields id={id} latest={t.latestVersion ?? 0} />
        </Grid.Col>
      </Grid>
      {/* Keyed by the revision: a saved draft (or another tab's) starts the editor from what is stored. */}
      <DefinitionEditor key={t.updatedAt} id={id} canEdit={canEdit} definition={{ schema: t.schema, variables: t.variables, constants: t.constants, calculatedVariables: t.calculatedVariables }} />
    </Stack>
  );
}

/** "Publish": a dialog with the release notes; `onPublished` hears of the new version (the embedded designer tells its parent page). */
export function Publish({ id, onPublished }: { id: string; onPublished?: (published: { templateId: string; version: number; versionId: string; publishedAt: string }) => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  const [notes, setNotes] = useState('');
  const queries = useQueryClient();
  const publish = useMutation({
    mutationFn: () => must(api.POST('/api/templates/{id}/publish', { params: { path: { id } }, body: notes ? { releaseNotes: notes } : {} })),
    onSuccess: async (published) => {
      await queries.invalidateQueries({ queryKey: ['template', id] });
      await queries.invalidateQueries({ queryKey: ['templates'] });
      close();
      onPublished?.({ templateId: published.templateId, version: published.version, versionId: published.id, publishedAt: published.publishedAt });
    },
  });
  return (
    <>
      <Button onClick={open}>Publish</Button>
      <Modal opened={opened} onClose={close} title="Publish a new version">
        <Stack>
          <Failure error={publish.error} />
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
function Workbench({ id, canEdit, formats, published, revision, calculated, declared }: { id: string; canEdit: boolean; formats: string[]; published: boolean; revision: string; calculated: string[]; declared: DeclaredVariable[] }) {
  const sample = useSampleData(id, canEdit);
  return (
    <Grid gap="lg">
      <Grid.Col span={{ base: 12, lg: 5 }}>
        <Stack>
          <SampleDataPanel sample={sample} id={id} revision={revision} calculated={calculated} />
          <Generate id={id} formats={formats} published={published} sample={sample.value} declared={declared} />
        </Stack>
      </Grid.Col>
      <Grid.Col span={{ base: 12, lg: 7 }}>
        <PreviewPanel id={id} formats={formats} revision={revision} variables={sample.debounced} />
      </Grid.Col>
    </Grid>
  );
}

/**
 * The published versions, newest first: each one's definition to look at, and (for members) restore,
 * which publishes it again as the next version and makes it the draft.
 */
function Versions({ id, canEdit, latest }: { id: string; canEdit: boolean; latest: number }) {
  const queries = useQueryClient();
  const versions = useQuery({ queryKey: ['versions', id, latest], queryFn: () => must(api.GET('/api/templates/{id}/versions', { params: { path: { id } } })), placeholderData: keepPreviousData });
  const [viewing, setViewing] = useState<number>();
  const [restoring, setRestoring] = useState<number>();
  const shown = useQuery({
    queryKey: ['version', id, viewing],
    queryFn: () => must(api.GET('/api/templates/{id}/versions/{versionId}', { params: { path: { id, versionId: String(viewing) } } })),
    enabled: viewing !== undefined,
  });
  const restore = useMutation({
    mutationFn: (version: number) => must(api.POST('/api/templates/{id}/versions/{versionId}/restore', { params: { path: { id, versionId: String(version) } }, body: {} })),
    onSuccess: async () => {
      setRestoring(undefined);
      await queries.invalidateQueries({ queryKey: ['template', id] });
    },
  });
  if (!versions.data || versions.data.length === 0) return null;
  return (
    <Paper withBorder p="md" component="section" aria-label="Versions">
      <Stack>
        <Title order={3} size="h4">
          Versions
        </Title>
        {restore.data && <Alert color="green" role="status">{restore.data.message}</Alert>}
        <Table aria-label="Published versions">
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
            {versions.data.map((v) => (
              <Table.Tr key={v.id}>
                <Table.Td>v{v.version}</Table.Td>
                <Table.Td>{new Date(v.publishedAt).toLocaleString()}</Table.Td>
                <Table.Td>{v.publishedBy ?? '—'}</Table.Td>
                <Table.Td>{v.releaseNotes ?? ''}</Table.Td>
                <Table.Td>
                  <Group gap="xs">
                    <Button size="compact-sm" variant="default" onClick={() => setViewing(v.version)} aria-label={`View version ${v.version}`}>
                      View
                    </Button>
                    {canEdit && v.version !== latest && (
                      <Button size="compact-sm" variant="light" onClick={() => setRestoring(v.version)} aria-label={`Restore version ${v.version}`}>
                        Restore
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Stack>
      <Modal opened={viewing !== undefined} onClose={() => setViewing(undefined)} title={`Version ${viewing ?? ''}`} size="xl">
        <Failure error={shown.error} />
        {shown.data && (
          <Stack>
            <Text size="sm">
              {shown.data.name} · {shown.data.outputFormats.join(', ')} · published {new Date(shown.data.publishedAt).toLocaleString()}
            </Text>
            <JsonInput
              label="Definition of this version"
              readOnly
              autosize
              maxRows={30}
              value={JSON.stringify({ schema: shown.data.schema, variables: shown.data.variables, constants: shown.data.constants, calculatedVariables: shown.data.calculatedVariables }, null, 2)}
            />
          </Stack>
        )}
      </Modal>
      <Modal opened={restoring !== undefined} onClose={() => setRestoring(undefined)} title={`Restore version ${restoring ?? ''}?`}>
        <Stack>
          <Text size="sm">Its definition becomes the draft and is published at once as version {latest + 1}: documents generated from now on use it.</Text>
          <Failure error={restore.error} />
          <Button onClick={() => restoring !== undefined && restore.mutate(restoring)} loading={restore.isPending}>
            Restore and publish
          </Button>
        </Stack>
      </Modal>
    </Paper>
  );
}
