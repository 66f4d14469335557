import { Alert, Badge, Button, Code, CopyButton, Group, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must } from '../api';
import { useSession } from '../session';

/** The project's API keys: created here (the key shown once), listed by prefix, revoked. Project admins only, as the API says. */
export function ApiKeysPage() {
  const { team } = useSession();
  const isAdmin = team?.role === 'admin' || team?.role === 'owner';
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys', team?.id], queryFn: () => must(api.GET('/api/api-keys')), enabled: !!team && isAdmin });
  const revoke = useMutation({
    mutationFn: (id: string) => must(api.POST('/api/api-keys/{id}/revoke', { params: { path: { id } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  if (!isAdmin) {
    return (
      <Stack>
        <Title order={2}>API keys</Title>
        <Text c="dimmed">Only the project&apos;s admins and owner manage its API keys.</Text>
      </Stack>
    );
  }
  const list = keys.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>API keys</Title>
        <CreateKey />
      </Group>
      {(keys.error ?? revoke.error) && <Alert color="red" role="alert">{(keys.error ?? revoke.error)?.message}</Alert>}
      {list.length === 0 && keys.data && <Text c="dimmed">No API keys yet.</Text>}
      {list.length > 0 && (
        <Table aria-label="API keys">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Last used</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((key) => (
              <Table.Tr key={key.id}>
                <Table.Td>{key.name}</Table.Td>
                <Table.Td>
                  <Code>{key.keyPrefix}…</Code>
                </Table.Td>
                <Table.Td>{key.isActive ? <Badge color="green">active</Badge> : <Badge color="gray">revoked</Badge>}</Table.Td>
                <Table.Td>{key.lastUsedAt ? new Date(key.lastUsedAt).toLocaleString() : 'never'}</Table.Td>
                <Table.Td>
                  {key.isActive && (
                    <Button size="xs" variant="light" color="red" aria-label={`Revoke ${key.name}`} onClick={() => revoke.mutate(key.id)}>
                      Revoke
                    </Button>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

function CreateKey() {
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const queries = useQueryClient();
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/api-keys', { body: { name } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const done = () => {
    close();
    create.reset();
    setName('');
  };
  return (
    <>
      <Button onClick={open}>Create API key</Button>
      <Modal opened={opened} onClose={done} title="Create an API key">
        {create.data ? (
          <Stack>
            <Text>This is the only time the key is shown: copy it now and keep it somewhere safe.</Text>
            <TextInput label="New API key" readOnly value={create.data.plainKey} />
            <Group>
              <CopyButton value={create.data.plainKey}>
                {({ copied, copy }) => (
                  <Button color={copied ? 'teal' : 'blue'} onClick={copy}>
                    {copied ? 'Copied' : 'Copy'}
                  </Button>
                )}
              </CopyButton>
              <Button variant="default" onClick={done}>
                Done
              </Button>
            </Group>
          </Stack>
        ) : (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              create.mutate();
            }}
          >
            <Stack>
              {create.error && <Alert color="red" role="alert">{create.error.message}</Alert>}
              <TextInput label="Name" description="What the key is for, e.g. the system that uses it" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
              <Button type="submit" loading={create.isPending}>
                Create
              </Button>
            </Stack>
          </form>
        )}
      </Modal>
    </>
  );
}
