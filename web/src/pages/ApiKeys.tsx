import { Alert, Button, Code, Group, Modal, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import type { components } from '@formwork/client';
import { api, must, mustSucceed } from '../api';
import { useSession } from '../session';
import { ConfirmButton, Failure, Pager, ShownOnce, when } from './controls';
import { OAuthClients } from './OAuthClients';
import { allFlags, DEFAULT_PERMISSIONS, PermissionBadges, PermissionChecks, StateBadge, type Permissions } from './permissions';

type ApiKey = components['schemas']['ApiKey'];

/**
 * The project's credentials (docs/web.md "API keys and OAuth clients"): API keys created here (the key
 * shown once), listed with their state, edited, revoked and reactivated, deleted, with each one's usage;
 * then the OAuth clients. Project admins only, as the API says; others are told so and shown nothing.
 */
export function ApiKeysPage() {
  const { team, reloadTeams } = useSession();
  useEffect(() => {
    void reloadTeams();
  }, [reloadTeams]);
  const isAdmin = team?.role === 'admin' || team?.role === 'owner';
  if (!isAdmin) {
    return (
      <Stack>
        <Title order={2}>API keys</Title>
        <Text c="dimmed">Only the project&apos;s admins and owner manage its API keys and OAuth clients.</Text>
      </Stack>
    );
  }
  return (
    <Stack>
      <Title order={2}>API keys</Title>
      <ApiKeys />
      <OAuthClients />
    </Stack>
  );
}

const PAGE = 20;

function ApiKeys() {
  const { team } = useSession();
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [detail, setDetail] = useState<string>();
  const keys = useQuery({ queryKey: ['api-keys', team?.id, page], queryFn: () => must(api.GET('/api/api-keys', { params: { query: { page, limit: PAGE } } })) });
  const changed = () => queries.invalidateQueries({ queryKey: ['api-keys'] });
  const revoke = useMutation({ mutationFn: (id: string) => must(api.POST('/api/api-keys/{id}/revoke', { params: { path: { id } } })), onSettled: changed });
  const reactivate = useMutation({ mutationFn: (id: string) => must(api.PATCH('/api/api-keys/{id}', { params: { path: { id } }, body: { isActive: true } })), onSettled: changed });
  const remove = useMutation({ mutationFn: (id: string) => mustSucceed(api.DELETE('/api/api-keys/{id}', { params: { path: { id } } })), onSettled: changed });
  const list: ApiKey[] = keys.data?.data ?? [];
  const error = keys.error ?? revoke.error ?? reactivate.error ?? remove.error;
  const shown = list.find((k) => k.id === detail);
  return (
    <Stack component="section" aria-label="API keys">
      <Group justify="space-between">
        <Text size="sm" c="dimmed" maw={640}>
          A key is one long-lived secret sent with every call (<Code>Authorization: Bearer fm_…</Code>), allowed what its permissions say.
        </Text>
        <CreateKey />
      </Group>
      {error && <Alert color="red" role="alert">{error.message}</Alert>}
      {list.length === 0 && keys.data && <Text c="dimmed">No API keys yet.</Text>}
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={960}>
          <Table aria-label="API keys" verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Permissions</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td>{key.name}</Table.Td>
                  <Table.Td>
                    <Code>{key.keyPrefix}</Code>
                  </Table.Td>
                  <Table.Td miw={180}>
                    <PermissionBadges value={key.permissions} />
                  </Table.Td>
                  <Table.Td>
                    <StateBadge reason={key.inactiveReason} />
                  </Table.Td>
                  <Table.Td>{when(key.expiresAt)}</Table.Td>
                  <Table.Td>{when(key.lastUsedAt)}</Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <Button size="compact-sm" variant="default" aria-label={`Details of ${key.name}`} onClick={() => setDetail(key.id)}>
                        Details
                      </Button>
                      {key.isActive ? (
                        <Button size="compact-sm" variant="light" color="orange" aria-label={`Revoke ${key.name}`} loading={revoke.isPending && revoke.variables === key.id} onClick={() => revoke.mutate(key.id)}>
                          Revoke
                        </Button>
                      ) : (
                        <Button size="compact-sm" variant="light" aria-label={`Reactivate ${key.name}`} loading={reactivate.isPending && reactivate.variables === key.id} onClick={() => reactivate.mutate(key.id)}>
                          Reactivate
                        </Button>
                      )}
                      <ConfirmButton label="Delete" name={`Delete ${key.name}`} title={`Delete the API key “${key.name}”?`} confirm="Delete key" onConfirm={() => remove.mutate(key.id)}>
                        Everything that uses it is refused from now on, and its usage statistics go with it. This cannot be undone; revoking can.
                      </ConfirmButton>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Pager meta={keys.data?.meta} onPage={setPage} of="API keys" />
      {shown && <KeyDetails apiKey={shown} onClose={() => setDetail(undefined)} />}
    </Stack>
  );
}

/** The key's usage (read again every 5 s while open: the API writes the counts every few seconds) and its name and permissions to edit. */
function KeyDetails({ apiKey: key, onClose }: { apiKey: ApiKey; onClose: () => void }) {
  const queries = useQueryClient();
  const stats = useQuery({
    queryKey: ['api-key-stats', key.id],
    queryFn: () => must(api.GET('/api/api-keys/{id}/stats', { params: { path: { id: key.id } } })),
    refetchInterval: 5000,
  });
  const [name, setName] = useState(key.name);
  const [permissions, setPermissions] = useState<Permissions>(allFlags(key.permissions));
  const save = useMutation({
    mutationFn: () => must(api.PATCH('/api/api-keys/{id}', { params: { path: { id: key.id } }, body: { name, permissions } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const s = stats.data;
  return (
    <Modal opened onClose={onClose} title={`API key “${key.name}”`} size="lg">
      <Stack>
        <Text size="sm">
          <Code>{key.keyPrefix}</Code> · created {when(key.createdAt)} · expires {when(key.expiresAt)} · <StateBadge reason={key.inactiveReason} />
        </Text>
        <Stack gap={4} component="section" aria-label="Usage">
          <Title order={3} size="h5">
            Usage
          </Title>
          <Failure error={stats.error} />
          {s && (
            <SimpleGrid cols={4}>
              <Figure label="Requests in total" value={s.totalRequests} />
              <Figure label="Requests today (UTC)" value={s.requestsToday} />
              <Figure label="Documents generated" value={s.documentsGenerated} />
              <Figure label="Last used" value={when(s.lastUsedAt)} />
            </SimpleGrid>
          )}
          <Text size="xs" c="dimmed">
            The counts are written every few seconds, so the latest calls may take a moment to show.
          </Text>
        </Stack>
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Stack component="section" aria-label="Edit the key">
            <TextInput label="Name" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <PermissionChecks label="Permissions" value={permissions} onChange={setPermissions} />
            <Failure error={save.error} />
            {save.isSuccess && <Text role="status" size="sm" c="green">Saved: the key is allowed this from its next call</Text>}
            <Group>
              <Button type="submit" loading={save.isPending}>
                Save changes
              </Button>
            </Group>
          </Stack>
        </form>
      </Stack>
    </Modal>
  );
}

function Figure({ label, value }: { label: string; value: string | number }) {
  return (
    <div role="group" aria-label={label}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={600}>{value}</Text>
    </div>
  );
}

/** Today in the person's time zone, as a date input writes it (YYYY-MM-DD). */
function today(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The end of the chosen day in the person's time zone, as the API takes it. */
function endOfDay(date: string): string {
  return new Date(`${date}T23:59:59.999`).toISOString();
}

function CreateKey() {
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permissions>(DEFAULT_PERMISSIONS);
  const [expires, setExpires] = useState('');
  const queries = useQueryClient();
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/api-keys', { body: { name, permissions, ...(expires ? { expiresAt: endOfDay(expires) } : {}) } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const done = () => {
    close();
    create.reset();
    setName('');
    setPermissions(DEFAULT_PERMISSIONS);
    setExpires('');
  };
  return (
    <>
      <Button onClick={open}>Create API key</Button>
      <Modal opened={opened} onClose={done} title="Create an API key" size="lg">
        {create.data ? (
          <Stack>
            <Text>This is the only time the key is shown: copy it now and keep it somewhere safe.</Text>
            <ShownOnce label="New API key" value={create.data.plainKey} />
            <Group>
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
              <Failure error={create.error} />
              <TextInput label="Name" description="What the key is for, e.g. the system that uses it" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
              <PermissionChecks label="Permissions" value={permissions} onChange={setPermissions} />
              <TextInput
                type="date"
                label="Expires after (optional)"
                description="The key stops working at the end of this day; leave empty for a key that does not expire"
                min={today()}
                value={expires}
                onChange={(e) => setExpires(e.currentTarget.value)}
                w={260}
              />
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
