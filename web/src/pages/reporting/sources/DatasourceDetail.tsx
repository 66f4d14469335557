import { Alert, Anchor, Badge, Button, Code, Group, Loader, Modal, Paper, PasswordInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, mustSucceed } from '../../../api';
import { useSession } from '../../../session';
import { ConfirmButton, Failure, when } from '../../controls';
import { isAdmin, targetOf, TestBadge } from './Datasources';
import { SchemaTree } from './SchemaTree';
import { ApiRefusal, call, ErrorAlert, KIND_NAMES, problemsAt, type Datasource, type DiscoveredSchema } from './shared';
import { TestOutcome } from './TestOutcome';

/** The discovered schema of a datasource, or null before the first read (404 ERR_DS_008). */
export function useDiscoveredSchema(id: string | undefined, teamId: string | undefined) {
  return useQuery({
    queryKey: ['reporting-schema', teamId, id],
    queryFn: async (): Promise<DiscoveredSchema | null> => {
      try {
        return await call(api.GET('/api/reporting/datasources/{id}/schema', { params: { path: { id: id! }, query: {} } }));
      } catch (err) {
        if (err instanceof ApiRefusal && err.code === 'ERR_DS_008') return null;
        throw err;
      }
    },
    enabled: !!id && !!teamId,
  });
}

/**
 * "Edit": the name, the description and a new password (write-only: left empty, the stored one stays).
 * Where it connects is not changed here: the API drops the secrets when the target changes
 * (docs/reporting.md "Secrets are tied to their target").
 */
function EditDatasource({ datasource, onClose }: { datasource: Datasource; onClose: () => void }) {
  const queries = useQueryClient();
  const [name, setName] = useState(datasource.name);
  const [description, setDescription] = useState(datasource.description ?? '');
  const [password, setPassword] = useState('');
  const secretName = datasource.kind === 'postgres' || datasource.kind === 'mysql' ? 'password' : undefined;
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/api/reporting/datasources/{id}', {
          params: { path: { id: datasource.id } },
          body: { name: name.trim(), description: description.trim() || null, ...(secretName && password ? { secrets: { [secretName]: password } } : {}) },
        }),
      ),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['reporting-datasource'] });
      void queries.invalidateQueries({ queryKey: ['reporting-datasources'] });
      onClose();
    },
  });
  const at = (path: string) => problemsAt(save.error, path).map((p) => p.message).join('; ') || undefined;
  return (
    <Modal opened onClose={onClose} title={`Edit ${datasource.name}`}>
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={at('name')} />
          <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} error={at('description')} />
          {secretName && (
            <PasswordInput label="New password" description="Write-only; left empty, the stored password stays" value={password} onChange={(e) => setPassword(e.currentTarget.value)} error={at(`secrets.${secretName}`)} autoComplete="new-password" />
          )}
          <ErrorAlert error={save.error} shown={['name', 'description', 'secrets']} />
          <Group justify="flex-end">
            <Button type="submit" loading={save.isPending}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

const HEALTH: Record<string, string> = { ok: 'green', failing: 'red', unknown: 'gray', offline: 'red' };

/**
 * A datasource: where it reads from and how (secrets only as "set"), its health and "Test connection",
 * the discovered schema as a tree ("Read the schema" discovers it again), "New query" on it and "Delete".
 */
export function DatasourcePage() {
  const { id } = useParams();
  const { team } = useSession();
  const admin = isAdmin(team?.role);
  const member = admin || team?.role === 'member';
  const navigate = useNavigate();
  const queries = useQueryClient();
  const datasource = useQuery({
    queryKey: ['reporting-datasource', team?.id, id],
    queryFn: () => call(api.GET('/api/reporting/datasources/{id}', { params: { path: { id: id! } } })),
    enabled: !!team && !!id,
  });
  const health = useQuery({
    queryKey: ['reporting-datasource-health', team?.id, id],
    queryFn: () => call(api.GET('/api/reporting/datasources/{id}/health', { params: { path: { id: id! } } })),
    enabled: !!team && !!id,
  });
  const schema = useDiscoveredSchema(id, team?.id);
  const test = useMutation({
    mutationFn: async () => {
      const { data, error, response } = await api.POST('/api/reporting/datasources/{id}/test', { params: { path: { id: id! } }, body: {} });
      if (error !== undefined || !data) throw new ApiRefusal(error);
      return response.status === 202 ? { pending: (data as { taskId: string }).taskId } : (data as Exclude<typeof data, { taskId: string }>);
    },
    onSettled: () => Promise.all([queries.invalidateQueries({ queryKey: ['reporting-datasource-health'] }), queries.invalidateQueries({ queryKey: ['reporting-datasource'] })]),
  });
  const refresh = useMutation({
    mutationFn: async () => {
      const { data, error, response } = await api.POST('/api/reporting/datasources/{id}/schema/refresh', { params: { path: { id: id! } }, body: {} });
      if (error !== undefined || !data) throw new ApiRefusal(error);
      return response.status === 202 ? null : (data as DiscoveredSchema);
    },
    onSuccess: (found) => {
      if (found) queries.setQueryData(['reporting-schema', team?.id, id], found);
      return queries.invalidateQueries({ queryKey: ['reporting-datasource'] });
    },
  });
  const remove = useMutation({
    mutationFn: () => mustSucceed(api.DELETE('/api/reporting/datasources/{id}', { params: { path: { id: id! } } })),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['reporting-datasources'] });
      return navigate('/reporting/datasources');
    },
  });

  const [editing, setEditing] = useState(false);
  const d = datasource.data;
  const back = (
    <Anchor component={Link} to="/reporting/datasources" size="sm">
      Datasources
    </Anchor>
  );
  if (datasource.error) {
    return (
      <Stack>
        {back}
        <Alert color="red" role="alert">
          {datasource.error.message}
        </Alert>
      </Stack>
    );
  }
  if (!d) return <Loader aria-label="Loading" />;
  const config = d.config as Record<string, unknown>;
  const secrets = Object.entries(d.secrets);
  const h = health.data;
  return (
    <Stack>
      <div>
        {back}
        <Group justify="space-between" align="end">
          <Title order={2}>{d.name}</Title>
          <Group gap="xs">
            {member && (
              <Button component={Link} to={`/reporting/queries/new?datasource=${d.id}`} variant="default">
                New query on it
              </Button>
            )}
            {admin && (
              <Button variant="default" onClick={() => setEditing(true)}>
                Edit
              </Button>
            )}
            {admin && (
              <ConfirmButton label="Delete" name={`Delete ${d.name}`} title={`Delete ${d.name}?`} confirm="Delete datasource" onConfirm={() => remove.mutate()} size="sm">
                Its credentials and discovered schema are deleted. A datasource that queries still use cannot be deleted: delete those queries first.
              </ConfirmButton>
            )}
          </Group>
        </Group>
        {d.description && <Text c="dimmed">{d.description}</Text>}
      </div>
      {editing && <EditDatasource datasource={d} onClose={() => setEditing(false)} />}
      <Failure error={remove.error} />

      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
        <Paper withBorder p="md" component="section" aria-label="Connection">
          <Stack gap="xs">
            <Title order={3}>Connection</Title>
            <Text size="sm">
              {KIND_NAMES[d.kind]}
              {d.connectionMode === 'agent' ? ', through an agent' : ', Formwork connects'}
            </Text>
            <Code block>{targetOf(d)}</Code>
            {typeof config.ssl === 'string' && <Text size="sm">TLS: {config.ssl}</Text>}
            <Text size="sm">
              Secrets:{' '}
              {secrets.length === 0
                ? 'none set'
                : secrets.map(([name, s]) => (
                    <Badge key={name} variant="light" mr={4}>
                      {name} set {new Date(s.updatedAt).toLocaleDateString()}
                    </Badge>
                  ))}
            </Text>
            <Text size="xs" c="dimmed">
              Secrets are write-only: Formwork never shows them again.
            </Text>
            <Group gap="xs">
              <Text size="sm">Last test:</Text>
              <TestBadge test={d.lastTest} />
              <Text size="sm" c="dimmed">
                {d.lastTest ? when(d.lastTest.at) : ''}
              </Text>
            </Group>
            {admin && (
              <Group>
                <Button variant="default" loading={test.isPending} onClick={() => test.mutate()}>
                  Test connection
                </Button>
              </Group>
            )}
            <TestOutcome outcome={test.data} pending={test.isPending} error={test.error} />
          </Stack>
        </Paper>

        <Paper withBorder p="md" component="section" aria-label="Health">
          <Stack gap="xs">
            <Title order={3}>Health</Title>
            {h && (
              <>
                <Group gap="xs">
                  <Text size="sm">Status:</Text>
                  <Badge color={HEALTH[h.status] ?? 'gray'}>{h.status}</Badge>
                  <Text size="sm" c="dimmed">
                    checked by the {h.executedBy === 'agent' ? 'agent' : 'server'}
                    {h.reportedAt ? `, ${when(h.reportedAt)}` : ''}
                  </Text>
                </Group>
                <Text size="sm">
                  Connections: {h.pool.size} open of {h.pool.max}, {h.pool.idle} idle, {h.pool.waiting} waiting
                </Text>
                {h.lastError && (
                  <Text size="sm" c="red">
                    Last error: {h.lastError.message} ({h.lastError.code})
                  </Text>
                )}
              </>
            )}
            <Text size="sm">
              Queries time out after {d.defaults.timeoutSeconds} s and read at most {d.defaults.maxRows.toLocaleString()} rows unless a query says otherwise.
            </Text>
          </Stack>
        </Paper>
      </SimpleGrid>

      <Paper withBorder p="md" component="section" aria-label="Schema">
        <Stack gap="xs">
          <Group justify="space-between">
            <Title order={3}>Schema</Title>
            {member && (
              <Button variant="default" loading={refresh.isPending} onClick={() => refresh.mutate()}>
                {schema.data ? 'Read the schema again' : 'Read the schema'}
              </Button>
            )}
          </Group>
          <Failure error={refresh.error} />
          {refresh.data === null && !refresh.isPending && <Text size="sm">The agent has not answered yet; read the page again in a moment.</Text>}
          <Failure error={schema.error} />
          {schema.data === null && <Text c="dimmed">The schema has not been read yet.</Text>}
          {schema.data && (
            <>
              <Text size="xs" c="dimmed">
                {schema.data.tables.length} {schema.data.tables.length === 1 ? 'table' : 'tables and views'}, read {when(schema.data.refreshedAt)}
              </Text>
              <SchemaTree schema={schema.data} label={`Tables of ${d.name}`} />
            </>
          )}
        </Stack>
      </Paper>
    </Stack>
  );
}
