import { Alert, Autocomplete, Badge, Button, Card, Checkbox, FileButton, Group, Modal, Radio, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorText, must } from '../api';
import { saveAnswer } from '../download';
import { useSession } from '../session';
import { Failure } from './controls';

/** A new template: one section with the template's name as its heading, ready for the designer. */
function blankDefinition(name: string) {
  return { sections: [{ id: 'main', components: [{ id: 'title', type: 'heading', props: { text: name, level: 1 } }] }] };
}

export function TemplatesPage() {
  const { team } = useSession();
  const canEdit = team?.role !== 'viewer';
  const [search, setSearch] = useState('');
  const [folder, setFolder] = useState<string | null>(null);
  const [selected, setSelected] = useState<string[]>([]);
  // The box's state is read in the handler: React may run an updater after the event, when currentTarget is null.
  const toggle = (id: string, checked: boolean) => setSelected((now) => (checked ? [...now, id] : now.filter((x) => x !== id)));
  const [notice, setNotice] = useState<{ color: string; text: string }>();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const templates = useQuery({
    queryKey: ['templates', team?.id, search, folder],
    queryFn: () => must(api.GET('/api/templates', { params: { query: { search: search || undefined, folderId: folder ?? undefined, limit: 100 } } })),
    enabled: !!team,
  });
  const folders = useQuery({ queryKey: ['templates', 'folders', team?.id], queryFn: async () => (await must(api.GET('/api/templates/folders'))).data, enabled: !!team });
  const refresh = () => queries.invalidateQueries({ queryKey: ['templates'] });
  const move = useMutation({
    mutationFn: async ({ ids, to }: { ids: string[]; to: string | null }) => {
      for (const id of ids) await must(api.PUT('/api/templates/{id}', { params: { path: { id } }, body: { folderId: to } }));
      return { count: ids.length, to };
    },
    onSuccess: async ({ count, to }) => {
      setSelected([]);
      setNotice({ color: 'green', text: `${count === 1 ? '1 template' : `${count} templates`} ${to ? `moved to ${to}` : 'taken out of their folder'}` });
      await refresh();
    },
    onError: async (error) => {
      setNotice({ color: 'red', text: error.message });
      await refresh();
    },
  });
  const duplicate = useMutation({
    mutationFn: (id: string) => must(api.POST('/api/templates/{id}/duplicate', { params: { path: { id } } })),
    onSuccess: async (copy) => {
      setNotice({ color: 'green', text: `Copied as ${copy.name}` });
      await refresh();
    },
    onError: (error) => setNotice({ color: 'red', text: error.message }),
  });
  const remove = useMutation({
    mutationFn: (ids: string[]) => must(api.POST('/api/templates/bulk-delete', { body: { ids } })),
    onSuccess: async (result) => {
      setSelected([]);
      setNotice({ color: result.errors.length ? 'yellow' : 'green', text: `Deleted ${result.deleted} template${result.deleted === 1 ? '' : 's'}${result.errors.length ? `; ${result.errors.length} could not be` : ''}` });
      await refresh();
    },
    onError: (error) => setNotice({ color: 'red', text: error.message }),
  });
  const importFile = useMutation({
    mutationFn: async (file: File) => {
      const form = new FormData();
      form.append('file', file);
      form.append('duplicateHandling', 'rename');
      const { data, error } = await api.POST('/api/templates/import', { body: form as never, bodySerializer: (body: unknown) => body as FormData });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return data as { templateId: string; message: string };
    },
    onSuccess: async (result) => {
      await refresh();
      void navigate(`/templates/${result.templateId}`);
    },
    onError: (error) => setNotice({ color: 'red', text: error.message }),
  });
  const rows = templates.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Templates</Title>
        {canEdit && (
          <Group>
            <FileButton onChange={(file) => file && importFile.mutate(file)} accept="application/json,.json">
              {(props) => (
                <Button {...props} variant="default" loading={importFile.isPending}>
                  Import a file
                </Button>
              )}
            </FileButton>
            <StartFromExample />
            <NewTemplate />
          </Group>
        )}
      </Group>
      <Group align="end">
        <TextInput label="Search templates" placeholder="Part of a name" value={search} onChange={(e) => setSearch(e.currentTarget.value)} w={360} />
        <Select
          label="Folder"
          placeholder="All folders"
          clearable
          w={220}
          value={folder}
          onChange={setFolder}
          data={(folders.data ?? []).map((f) => ({ value: f.name, label: `${f.name} (${f.templates})` }))}
        />
        {canEdit && selected.length > 0 && (
          <>
            <MoveSelected count={selected.length} folders={(folders.data ?? []).map((f) => f.name)} busy={move.isPending} onConfirm={(to) => move.mutate({ ids: selected, to })} />
            <DeleteSelected count={selected.length} busy={remove.isPending} onConfirm={() => remove.mutate(selected)} />
          </>
        )}
      </Group>
      {notice && (
        <Alert color={notice.color} role="status" withCloseButton closeButtonLabel="Dismiss" onClose={() => setNotice(undefined)}>
          {notice.text}
        </Alert>
      )}
      <Failure error={templates.error} />
      {templates.data && rows.length === 0 && (
        <Text c="dimmed">No templates yet.{canEdit ? ' Start from an example, or a blank page with New template.' : ''}</Text>
      )}
      {rows.length > 0 && (
        <Table striped highlightOnHover aria-label="Templates">
          <Table.Thead>
            <Table.Tr>
              {canEdit && (
                <Table.Th w={40}>
                  <Checkbox
                    aria-label="Select all templates"
                    checked={selected.length === rows.length}
                    indeterminate={selected.length > 0 && selected.length < rows.length}
                    onChange={(e) => setSelected(e.currentTarget.checked ? rows.map((t) => t.id) : [])}
                  />
                </Table.Th>
              )}
              <Table.Th>Name</Table.Th>
              <Table.Th>Folder</Table.Th>
              <Table.Th>Formats</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Updated</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((t) => (
              <Table.Tr key={t.id}>
                {canEdit && (
                  <Table.Td>
                    <Checkbox aria-label={`Select ${t.name}`} checked={selected.includes(t.id)} onChange={(e) => toggle(t.id, e.currentTarget.checked)} />
                  </Table.Td>
                )}
                <Table.Td>
                  <Link to={`/templates/${t.id}`}>{t.name}</Link>
                </Table.Td>
                <Table.Td>{t.folderId ?? ''}</Table.Td>
                <Table.Td>{t.outputFormats.join(', ')}</Table.Td>
                <Table.Td>{t.isPublished ? <Badge color="green">published v{t.latestVersion}</Badge> : <Badge color="gray">draft</Badge>}</Table.Td>
                <Table.Td>{new Date(t.updatedAt).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Group gap="xs">
                    <Button size="compact-sm" variant="default" aria-label={`Export ${t.name}`} onClick={() => void exportTemplate(t.id).catch((e: Error) => setNotice({ color: 'red', text: e.message }))}>
                      Export
                    </Button>
                    {canEdit && (
                      <Button size="compact-sm" variant="default" aria-label={`Duplicate ${t.name}`} loading={duplicate.isPending && duplicate.variables === t.id} onClick={() => duplicate.mutate(t.id)}>
                        Duplicate
                      </Button>
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

/** Downloads the template file (GET /:id/export) under the name the API gives it. */
async function exportTemplate(id: string): Promise<void> {
  const { data, error, response } = await api.GET('/api/templates/{id}/export', { params: { path: { id } }, parseAs: 'blob' });
  if (error !== undefined || !data) throw new Error(errorText(error));
  saveAnswer(data as unknown as Blob, response, 'template.json');
}

/** Moves the selected templates into a folder (one in use or a new name), or out of theirs. */
function MoveSelected({ count, folders, busy, onConfirm }: { count: number; folders: string[]; busy: boolean; onConfirm: (to: string | null) => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const done = (to: string | null) => {
    onConfirm(to);
    close();
  };
  return (
    <>
      <Button variant="default" onClick={open}>
        Move to a folder
      </Button>
      <Modal opened={opened} onClose={close} title={`Move ${count} template${count === 1 ? '' : 's'}`}>
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            if (name.trim()) done(name.trim());
          }}
        >
          <Stack>
            <Autocomplete label="Folder name" description="A folder in use, or a new one" data={folders} value={name} onChange={setName} maxLength={100} data-autofocus />
            <Group>
              <Button type="submit" loading={busy} disabled={!name.trim()}>
                Move
              </Button>
              <Button variant="subtle" onClick={() => done(null)}>
                Take out of their folder
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

function DeleteSelected({ count, busy, onConfirm }: { count: number; busy: boolean; onConfirm: () => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button color="red" variant="light" onClick={open}>
        Delete selected ({count})
      </Button>
      <Modal opened={opened} onClose={close} title={`Delete ${count} template${count === 1 ? '' : 's'}?`}>
        <Stack>
          <Text size="sm">They stop resolving at once (generation included); documents already made from them stay.</Text>
          <Button
            color="red"
            loading={busy}
            onClick={() => {
              onConfirm();
              close();
            }}
          >
            Delete
          </Button>
        </Stack>
      </Modal>
    </>
  );
}

function NewTemplate() {
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const [format, setFormat] = useState<'pdf' | 'excel'>('pdf');
  const navigate = useNavigate();
  const queries = useQueryClient();
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/templates', { body: { name, outputFormats: [format], schema: blankDefinition(name) } })),
    onSuccess: async (created) => {
      await queries.invalidateQueries({ queryKey: ['templates'] });
      close();
      void navigate(`/templates/${created.id}`);
    },
  });
  return (
    <>
      <Button onClick={open}>New template</Button>
      <Modal opened={opened} onClose={close} title="New template">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <Failure error={create.error} />
            <TextInput label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            <Radio.Group label="Output" value={format} onChange={(v) => setFormat(v as 'pdf' | 'excel')}>
              <Group mt="xs">
                <Radio value="pdf" label="PDF" />
                <Radio value="excel" label="Excel" />
              </Group>
            </Radio.Group>
            <Button type="submit" loading={create.isPending}>
              Create
            </Button>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

function StartFromExample() {
  const [opened, { open, close }] = useDisclosure(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const examples = useQuery({ queryKey: ['examples'], queryFn: () => must(api.GET('/api/templates/examples')), enabled: opened });
  const start = useMutation({
    mutationFn: (key: string) => must(api.POST('/api/templates/examples/{key}', { params: { path: { key } } })),
    onSuccess: async (created) => {
      await queries.invalidateQueries({ queryKey: ['templates'] });
      close();
      void navigate(`/templates/${created.templateId}`, { state: { sampleData: created.sampleData } });
    },
  });
  return (
    <>
      <Button variant="light" onClick={open}>
        Start from an example
      </Button>
      <Modal opened={opened} onClose={close} title="Start from an example" size="xl">
        <Failure error={start.error} />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          {examples.data?.data.map((example) => (
            <Card key={example.key} withBorder component="section" aria-label={example.name}>
              <Text fw={600}>{example.name}</Text>
              <Text size="sm" c="dimmed" my="xs">
                {example.description}
              </Text>
              <Group justify="space-between">
                <Text size="xs">{example.outputFormats.join(', ')}</Text>
                <Button size="xs" aria-label={`Use the ${example.name} example`} loading={start.isPending && start.variables === example.key} onClick={() => start.mutate(example.key)}>
                  Use
                </Button>
              </Group>
            </Card>
          ))}
        </SimpleGrid>
      </Modal>
    </>
  );
}
