import { Alert, Badge, Button, Code, Group, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, mustSucceed } from '../../../api';
import { useSession } from '../../../session';
import { ConfirmButton, Failure, ShownOnce, when } from '../../controls';
import { isAdmin } from './Datasources';
import type { Agent } from './shared';

const STATUS: Record<Agent['status'], { word: string; colour: string }> = {
  online: { word: 'online', colour: 'green' },
  degraded: { word: 'degraded', colour: 'yellow' },
  offline: { word: 'offline', colour: 'red' },
  never_connected: { word: 'never connected', colour: 'gray' },
};

/** An agent's status as a badge. */
function AgentStatus({ status }: { status: Agent['status'] }) {
  const s = STATUS[status];
  return <Badge color={s.colour} miw="max-content">{s.word}</Badge>;
}

/** The token of a new agent or of a rotation, shown this once. */
function TokenDialog({ shown, onClose }: { shown: { name: string; token: string } | undefined; onClose: () => void }) {
  return (
    <Modal opened={!!shown} onClose={onClose} title={shown ? `Token of ${shown.name}` : ''}>
      {shown && (
        <Stack>
          <Text size="sm">
            Give this token to the agent (<Code>FORMWORK_AGENT_TOKEN</Code>, docs/agent.md). It is shown this once: Formwork keeps only its hash.
          </Text>
          <ShownOnce label="Agent token" value={shown.token} copyLabel="Copy the agent token" />
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}

/**
 * The project's agents (docs/agent.md): each one's health as the service last saw it (status, last
 * seen, load, key), refreshed every 10 s; admins register one (its token shown once), rotate a token,
 * confirm the key an agent sent by its fingerprint, and delete one.
 */
export function AgentsSection() {
  const { team } = useSession();
  const admin = isAdmin(team?.role);
  const queries = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [token, setToken] = useState<{ name: string; token: string }>();
  const [confirming, setConfirming] = useState<Agent>();
  const [fingerprint, setFingerprint] = useState('');
  const agents = useQuery({
    queryKey: ['reporting-agents', team?.id],
    queryFn: () => must(api.GET('/api/agents', { params: { query: { limit: 100 } } })),
    enabled: !!team,
    refetchInterval: 10_000,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['reporting-agents'] });
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/agents', { body: { name, description: description || undefined } })),
    onSuccess: (agent) => {
      setCreating(false);
      setName('');
      setDescription('');
      setToken({ name: agent.name, token: agent.token });
      return refresh();
    },
  });
  const rotate = useMutation({
    mutationFn: (agent: Agent) => must(api.POST('/api/agents/{id}/rotate-token', { params: { path: { id: agent.id } } })),
    onSuccess: (answer, agent) => {
      setToken({ name: agent.name, token: answer.token });
      return refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (agent: Agent) => mustSucceed(api.DELETE('/api/agents/{id}', { params: { path: { id: agent.id } } })),
    onSuccess: refresh,
  });
  const confirm = useMutation({
    mutationFn: (agent: Agent) => must(api.POST('/api/agents/{id}/key/confirm', { params: { path: { id: agent.id } }, body: { fingerprint: fingerprint.trim() } })),
    onSuccess: () => {
      setConfirming(undefined);
      setFingerprint('');
      return refresh();
    },
  });
  const rows = agents.data?.data ?? [];
  const error = agents.error ?? rotate.error ?? remove.error;
  return (
    <Stack component="section" aria-label="Agents" gap="sm" mt="lg">
      <Group justify="space-between">
        <Title order={3}>Agents</Title>
        {admin && <Button onClick={() => setCreating(true)}>New agent</Button>}
      </Group>
      <Text size="sm" c="dimmed">
        An agent runs inside your network and reaches databases the service cannot; it connects out to Formwork and takes the queries of the datasources set to use it.
      </Text>
      {error && (
        <Alert color="red" role="alert">
          {error.message}
        </Alert>
      )}
      {agents.data && rows.length === 0 && <Text c="dimmed">No agents yet.</Text>}
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={760}>
          <Table aria-label="Agents of the project">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Last seen</Table.Th>
                <Table.Th>Load</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Datasources</Table.Th>
                {admin && <Table.Th>Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td>
                    <Text size="sm">{a.name}</Text>
                    <Text size="xs" c="dimmed" ff="monospace">
                      {a.tokenPrefix}
                      {!a.isActive && ' (stopped)'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <AgentStatus status={a.status} />
                  </Table.Td>
                  <Table.Td>{when(a.lastSeenAt)}</Table.Td>
                  <Table.Td>{a.load ? `${a.load.running} of ${a.load.capacity} running, ${a.load.queued} queued` : '—'}</Table.Td>
                  <Table.Td>{a.keyStatus === 'pending' ? <Badge color="yellow" miw="max-content">to confirm</Badge> : a.keyStatus === 'confirmed' ? <Badge color="green">confirmed</Badge> : <Badge color="gray">none</Badge>}</Table.Td>
                  <Table.Td>{a.datasourceCount}</Table.Td>
                  {admin && (
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        {a.keyStatus === 'pending' && (
                          <Button size="compact-sm" variant="default" aria-label={`Confirm the key of ${a.name}`} onClick={() => setConfirming(a)}>
                            Confirm key
                          </Button>
                        )}
                        <Button size="compact-sm" variant="default" aria-label={`New token for ${a.name}`} loading={rotate.isPending && rotate.variables?.id === a.id} onClick={() => rotate.mutate(a)}>
                          New token
                        </Button>
                        <ConfirmButton label="Delete" name={`Delete ${a.name}`} title={`Delete ${a.name}?`} confirm="Delete agent" onConfirm={() => remove.mutate(a)}>
                          The agent can no longer connect. Datasources that use it stop working until they are moved to another agent.
                        </ConfirmButton>
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}

      <Modal opened={creating} onClose={() => setCreating(false)} title="New agent">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
            <Failure error={create.error} />
            <Group justify="flex-end">
              <Button type="submit" loading={create.isPending}>
                Create agent
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>

      <Modal opened={!!confirming} onClose={() => setConfirming(undefined)} title={confirming ? `Confirm the key of ${confirming.name}` : ''}>
        {confirming && (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              confirm.mutate(confirming);
            }}
          >
            <Stack>
              <Text size="sm">
                The agent sent a public key with the fingerprint <Code>{confirming.keyFingerprint}</Code>. Compare it with the one the agent printed when it started (docs/agent.md &quot;Confirming the key&quot;) and type that one here.
              </Text>
              <TextInput label="Fingerprint the agent printed" required value={fingerprint} onChange={(e) => setFingerprint(e.currentTarget.value)} spellCheck={false} />
              <Failure error={confirm.error} />
              <Group justify="flex-end">
                <Button type="submit" loading={confirm.isPending}>
                  Confirm key
                </Button>
              </Group>
            </Stack>
          </form>
        )}
      </Modal>
      <TokenDialog shown={token} onClose={() => setToken(undefined)} />
    </Stack>
  );
}
