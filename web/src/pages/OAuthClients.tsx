import { Alert, Button, Code, Group, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@formwork/client';
import { api, must, mustSucceed } from '../api';
import { useSession } from '../session';
import { ConfirmButton, Failure, Pager, ShownOnce, when } from './controls';
import { allFlags, DEFAULT_PERMISSIONS, PermissionBadges, PermissionChecks, StateBadge, type Permissions } from './permissions';

type Client = components['schemas']['OAuthClient'];
type ClientWithSecret = components['schemas']['OAuthClientWithSecret'];

const PAGE = 20;

/**
 * The project's OAuth clients (docs/oauth.md): the client-credentials grant, so a client is a name and
 * its permission flags (no redirect URIs: no person is sent anywhere). Its secret is shown once, at
 * creation and after each rotation.
 */
export function OAuthClients() {
  const { team } = useSession();
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<string>();
  const [secret, setSecret] = useState<ClientWithSecret>();
  const clients = useQuery({ queryKey: ['oauth-clients', team?.id, page], queryFn: () => must(api.GET('/api/oauth/clients', { params: { query: { page, limit: PAGE } } })) });
  const changed = () => queries.invalidateQueries({ queryKey: ['oauth-clients'] });
  const toggle = useMutation({
    mutationFn: ({ id, isActive }: { id: string; isActive: boolean }) => must(api.PATCH('/api/oauth/clients/{id}', { params: { path: { id } }, body: { isActive } })),
    onSettled: changed,
  });
  const rotate = useMutation({
    mutationFn: (id: string) => must(api.POST('/api/oauth/clients/{id}/rotate-secret', { params: { path: { id } } })),
    onSuccess: setSecret,
    onSettled: changed,
  });
  const remove = useMutation({ mutationFn: (id: string) => mustSucceed(api.DELETE('/api/oauth/clients/{id}', { params: { path: { id } } })), onSettled: changed });
  const list: Client[] = clients.data?.data ?? [];
  const error = clients.error ?? toggle.error ?? rotate.error ?? remove.error;
  const edited = list.find((c) => c.id === editing);
  return (
    <Stack component="section" aria-label="OAuth clients" mt="lg">
      <Group justify="space-between">
        <div>
          <Title order={2} size="h3">
            OAuth clients
          </Title>
          <Text size="sm" c="dimmed" maw={640}>
            A client sends its ID and secret only to <Code>/api/oauth/token</Code> (the client-credentials grant) and calls the API with the short-lived token it gets.
          </Text>
        </div>
        <CreateClient onCreated={setSecret} />
      </Group>
      {error && <Alert color="red" role="alert">{error.message}</Alert>}
      {list.length === 0 && clients.data && <Text c="dimmed">No OAuth clients yet.</Text>}
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={960}>
          <Table aria-label="OAuth clients" verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name and client ID</Table.Th>
                <Table.Th>Permissions</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Last token</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>
                    <Text size="sm">{c.name}</Text>
                    <Code>{c.clientId}</Code>
                  </Table.Td>
                  <Table.Td miw={180}>
                    <PermissionBadges value={c.permissions} />
                  </Table.Td>
                  <Table.Td>
                    <StateBadge reason={c.inactiveReason} />
                  </Table.Td>
                  <Table.Td>{when(c.lastUsedAt)}</Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <Button size="compact-sm" variant="default" aria-label={`Edit ${c.name}`} onClick={() => setEditing(c.id)}>
                        Edit
                      </Button>
                      <ConfirmButton
                        label="Rotate secret"
                        name={`Rotate the secret of ${c.name}`}
                        color="orange"
                        title={`Rotate the secret of “${c.name}”?`}
                        confirm="Rotate secret"
                        onConfirm={() => rotate.mutate(c.id)}
                      >
                        A new secret is shown once; the old one and every token obtained with it stop working at once.
                      </ConfirmButton>
                      <Button
                        size="compact-sm"
                        variant="light"
                        color={c.isActive ? 'orange' : 'blue'}
                        aria-label={`${c.isActive ? 'Deactivate' : 'Reactivate'} ${c.name}`}
                        loading={toggle.isPending && toggle.variables?.id === c.id}
                        onClick={() => toggle.mutate({ id: c.id, isActive: !c.isActive })}
                      >
                        {c.isActive ? 'Deactivate' : 'Reactivate'}
                      </Button>
                      <ConfirmButton label="Delete" name={`Delete ${c.name}`} title={`Delete the OAuth client “${c.name}”?`} confirm="Delete client" onConfirm={() => remove.mutate(c.id)}>
                        Its tokens stop working at once and its ID is gone for good.
                      </ConfirmButton>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Pager meta={clients.data?.meta} onPage={setPage} of="OAuth clients" />
      {edited && <EditClient client={edited} onClose={() => setEditing(undefined)} />}
      {secret && <ClientSecret client={secret} onClose={() => setSecret(undefined)} />}
    </Stack>
  );
}

/** The client's ID and its secret, shown this once (after creation or rotation). */
function ClientSecret({ client, onClose }: { client: ClientWithSecret; onClose: () => void }) {
  return (
    <Modal opened onClose={onClose} title={`The secret of “${client.name}”`} size="lg">
      <Stack>
        <Text>This is the only time the secret is shown: copy it now and keep it somewhere safe.</Text>
        <ShownOnce label="Client ID" value={client.clientId} copyLabel="Copy the client ID" />
        <ShownOnce label="Client secret" value={client.clientSecret} copyLabel="Copy the client secret" />
        <Text size="sm" c="dimmed">
          Exchange them for a token: <Code>POST /api/oauth/token</Code> with <Code>grant_type=client_credentials</Code>, the ID and secret as HTTP Basic credentials.
        </Text>
        <Group>
          <Button variant="default" onClick={onClose}>
            Done
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function CreateClient({ onCreated }: { onCreated: (client: ClientWithSecret) => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permissions>(DEFAULT_PERMISSIONS);
  const queries = useQueryClient();
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/oauth/clients', { body: { name, permissions } })),
    onSuccess: async (created) => {
      done();
      onCreated(created);
      await queries.invalidateQueries({ queryKey: ['oauth-clients'] });
    },
  });
  const done = () => {
    close();
    create.reset();
    setName('');
    setPermissions(DEFAULT_PERMISSIONS);
  };
  return (
    <>
      <Button onClick={open}>Create OAuth client</Button>
      <Modal opened={opened} onClose={done} title="Create an OAuth client" size="lg">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <Failure error={create.error} />
            <TextInput label="Name" description="The system that will use it" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            <PermissionChecks label="Permissions" value={permissions} onChange={setPermissions} />
            <Text size="xs" c="dimmed">
              A token request may ask for fewer of them (its <Code>scope</Code>), never more.
            </Text>
            <Button type="submit" loading={create.isPending}>
              Create client
            </Button>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

function EditClient({ client, onClose }: { client: Client; onClose: () => void }) {
  const queries = useQueryClient();
  const [name, setName] = useState(client.name);
  const [permissions, setPermissions] = useState<Permissions>(allFlags(client.permissions));
  const save = useMutation({
    mutationFn: () => must(api.PATCH('/api/oauth/clients/{id}', { params: { path: { id: client.id } }, body: { name, permissions } })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['oauth-clients'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Edit “${client.name}”`} size="lg">
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <Text size="sm">
            <Code>{client.clientId}</Code> · secret <Code>{client.secretPrefix}</Code> · created {when(client.createdAt)} · secret rotated {when(client.secretRotatedAt)}
          </Text>
          <TextInput label="Name" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} />
          <PermissionChecks label="Permissions" value={permissions} onChange={setPermissions} />
          <Text size="xs" c="dimmed">
            Narrowing them narrows the client&apos;s live tokens at once.
          </Text>
          <Failure error={save.error} />
          <Button type="submit" loading={save.isPending}>
            Save changes
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
