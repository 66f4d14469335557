import { Anchor, Badge, Button, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { Failure, Pager, when } from '../../controls';
import { AgentsSection } from './Agents';
import { KIND_NAMES, type Datasource } from './shared';

export const isAdmin = (role: string | undefined) => role === 'admin' || role === 'owner';

/** A datasource's last connection test as a badge. */
export function TestBadge({ test }: { test: Datasource['lastTest'] }) {
  if (!test) return <Badge color="gray" miw="max-content">not tested</Badge>;
  return test.ok ? <Badge color="green" miw="max-content">connected</Badge> : <Badge color="red" miw="max-content">failing</Badge>;
}

/** Where a datasource reads from, in a line. */
export function targetOf(d: Pick<Datasource, 'kind' | 'config'>): string {
  const c = d.config as Record<string, unknown>;
  if (d.kind === 'postgres' || d.kind === 'mysql') return `${String(c.user ?? '')}@${String(c.host ?? '')}:${String(c.port ?? '')}/${String(c.database ?? '')}`;
  if (d.kind === 'sqlite') return String(c.path ?? '');
  if (d.kind === 'http_json') return String(c.baseUrl ?? '');
  return c.source === 'url' ? String(c.url ?? '') : 'an uploaded file';
}

/** The project's datasources, and its agents below. */
export function DatasourcesPage() {
  const { team } = useSession();
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const list = useQuery({
    queryKey: ['reporting-datasources', team?.id, page, search],
    queryFn: () => must(api.GET('/api/reporting/datasources', { params: { query: { page, limit: 20, search: search || undefined } } })),
    enabled: !!team,
  });
  const rows = list.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Datasources</Title>
        {isAdmin(team?.role) && (
          <Button component={Link} to="/reporting/datasources/new">
            New datasource
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        The databases, APIs and files reports read from. Connect with a user that may only read: that is the real read-only guarantee.
        {!isAdmin(team?.role) && ' Only the project’s admins and owner add and change datasources (they hold credentials).'}
      </Text>
      <TextInput
        label="Search datasources"
        placeholder="Part of a name"
        value={search}
        onChange={(e) => {
          setSearch(e.currentTarget.value);
          setPage(1);
        }}
        maw={320}
      />
      <Failure error={list.error} />
      {list.data && rows.length === 0 && <Text c="dimmed">{search ? 'No datasource matches.' : 'No datasources yet.'}</Text>}
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={720}>
          <Table aria-label="Datasources" highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Reads from</Table.Th>
                <Table.Th>Connection</Table.Th>
                <Table.Th>Schema read</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((d) => (
                <Table.Tr key={d.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/reporting/datasources/${d.id}`}>
                      {d.name}
                    </Anchor>
                    {d.description && (
                      <Text size="xs" c="dimmed">
                        {d.description}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    {KIND_NAMES[d.kind]}
                    {d.connectionMode === 'agent' && (
                      <Text size="xs" c="dimmed">
                        through an agent
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
                      {targetOf(d)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <TestBadge test={d.lastTest} />
                  </Table.Td>
                  <Table.Td>{when(d.schemaRefreshedAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Pager meta={list.data?.meta} onPage={setPage} of="datasources" />
      <AgentsSection />
    </Stack>
  );
}
