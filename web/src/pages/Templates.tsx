import { Alert, Badge, Button, Card, Group, Modal, Radio, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, must } from '../api';
import { useSession } from '../session';

/** A new template: one section with the template's name as its heading, ready for the designer. */
function blankDefinition(name: string) {
  return { sections: [{ id: 'main', components: [{ id: 'title', type: 'heading', props: { text: name, level: 1 } }] }] };
}

export function TemplatesPage() {
  const { team } = useSession();
  const canEdit = team?.role !== 'viewer';
  const [search, setSearch] = useState('');
  const templates = useQuery({
    queryKey: ['templates', team?.id, search],
    queryFn: () => must(api.GET('/api/templates', { params: { query: { search: search || undefined, limit: 100 } } })),
    enabled: !!team,
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Templates</Title>
        {canEdit && (
          <Group>
            <StartFromExample />
            <NewTemplate />
          </Group>
        )}
      </Group>
      <TextInput label="Search templates" placeholder="Part of a name" value={search} onChange={(e) => setSearch(e.currentTarget.value)} maw={360} />
      {templates.error && <Alert color="red" role="alert">{templates.error.message}</Alert>}
      {templates.data && templates.data.data.length === 0 && (
        <Text c="dimmed">No templates yet.{canEdit ? ' Start from an example, or a blank page with New template.' : ''}</Text>
      )}
      {templates.data && templates.data.data.length > 0 && (
        <Table striped highlightOnHover aria-label="Templates">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Formats</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {templates.data.data.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>
                  <Link to={`/templates/${t.id}`}>{t.name}</Link>
                </Table.Td>
                <Table.Td>{t.outputFormats.join(', ')}</Table.Td>
                <Table.Td>{t.isPublished ? <Badge color="green">published v{t.latestVersion}</Badge> : <Badge color="gray">draft</Badge>}</Table.Td>
                <Table.Td>{new Date(t.updatedAt).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
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
            {create.error && <Alert color="red" role="alert">{create.error.message}</Alert>}
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
        {start.error && <Alert color="red" role="alert">{start.error.message}</Alert>}
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
