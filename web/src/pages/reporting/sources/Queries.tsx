import { Anchor, Badge, Button, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { Failure, Pager, when } from '../../controls';

/** The project's query objects: name, datasource, language, published version, last change. */
export function QueriesPage() {
  const { team } = useSession();
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const list = useQuery({
    queryKey: ['reporting-queries', team?.id, page, search],
    queryFn: () => must(api.GET('/api/reporting/queries', { params: { query: { page, limit: 20, search: search || undefined } } })),
    enabled: !!team,
  });
  const datasources = useQuery({
    queryKey: ['reporting-datasources', team?.id, 'all'],
    queryFn: () => must(api.GET('/api/reporting/datasources', { params: { query: { limit: 100 } } })),
    enabled: !!team,
  });
  const dsName = new Map((datasources.data?.data ?? []).map((d) => [d.id, d.name]));
  const rows = list.data?.data ?? [];
  const canWrite = team?.role !== 'viewer';
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Queries</Title>
        {canWrite && (
          <Button component={Link} to="/reporting/queries/new">
            New query
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        Saved queries on a datasource: a draft you edit and run, and versions you publish for reports to use.
      </Text>
      <TextInput
        label="Search queries"
        placeholder="Part of a name"
        value={search}
        onChange={(e) => {
          setSearch(e.currentTarget.value);
          setPage(1);
        }}
        maw={320}
      />
      <Failure error={list.error} />
      {list.data && rows.length === 0 && <Text c="dimmed">{search ? 'No query matches.' : 'No queries yet.'}</Text>}
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={680}>
          <Table aria-label="Queries" highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Datasource</Table.Th>
                <Table.Th>Parameters</Table.Th>
                <Table.Th>Published</Table.Th>
                <Table.Th>Changed</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((q) => (
                <Table.Tr key={q.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/reporting/queries/${q.id}`}>
                      {q.name}
                    </Anchor>
                    {q.description && (
                      <Text size="xs" c="dimmed">
                        {q.description}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{dsName.get(q.datasourceId) ?? q.datasourceId}</Table.Td>
                  <Table.Td>{q.parameters.map((p) => p.name).join(', ') || '—'}</Table.Td>
                  <Table.Td>{q.latestVersion > 0 ? <Badge color="green">version {q.latestVersion}</Badge> : <Badge color="gray">draft only</Badge>}</Table.Td>
                  <Table.Td>{when(q.updatedAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Pager meta={list.data?.meta} onPage={setPage} of="queries" />
    </Stack>
  );
}
