import { Alert, Anchor, Badge, Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { Failure, Pager, when } from '../../controls';
import { FLOW_TABS, SectionTabs } from '../../SectionTabs';
import { STATUS_WORDS, type Gate } from './model';

const PAGE = 25;

/** The project's gates (docs/web.md "Flow: gates"): search by name, filter by status, 25 a page, "New gate". */
export function GateList() {
  const { team } = useSession();
  const canEdit = team?.role !== 'viewer';
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<Gate['status'] | null>(null);
  const [page, setPage] = useState(1);
  const gates = useQuery({
    queryKey: ['gates', team?.id, search, status, page],
    queryFn: () => must(api.GET('/api/flow/gates', { params: { query: { page, limit: PAGE, sortBy: 'updatedAt', sortOrder: 'desc', ...(search.trim() ? { search: search.trim() } : {}), ...(status ? { status } : {}) } } })),
    enabled: !!team,
    placeholderData: (previous) => previous,
  });
  const list = gates.data?.data ?? [];
  return (
    <Stack>
      <SectionTabs label="Flow" tabs={FLOW_TABS} />
      <Group justify="space-between">
        <Title order={2}>Gates</Title>
        {canEdit && (
          <Button component={Link} to="/flow/gates/new">
            New gate
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        A gate checks each submitted payload against its schema and business rules, then renders, asks for approval and delivers, as it is set up.
      </Text>
      {notice && (
        <Alert color="green" role="status">
          {notice}
        </Alert>
      )}
      <Group align="flex-end">
        <TextInput
          label="Search gates"
          placeholder="Part of a name"
          w={320}
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            setPage(1);
          }}
        />
        <Select
          label="Status"
          placeholder="Any"
          clearable
          w={180}
          data={[
            { value: 'active', label: 'Active' },
            { value: 'paused', label: 'Paused' },
            { value: 'archived', label: 'Archived' },
          ]}
          value={status}
          onChange={(v) => {
            setStatus(v as Gate['status'] | null);
            setPage(1);
          }}
        />
      </Group>
      <Failure error={gates.error} />
      {gates.data && list.length === 0 && <Text c="dimmed">{search || status ? 'No gate matches.' : canEdit ? 'No gates yet: "New gate" makes one.' : 'No gates yet.'}</Text>}
      {list.length > 0 && (
        <Table aria-label="Gates" highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Payload</Table.Th>
              <Table.Th>Then</Table.Th>
              <Table.Th>Version</Table.Th>
              <Table.Th>Changed</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((g) => (
              <Table.Tr key={g.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/flow/gates/${g.id}`}>
                    {g.name}
                  </Anchor>
                  <Text size="xs" c="dimmed">
                    {g.shortId}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Badge variant="light" color={STATUS_WORDS[g.status].colour}>
                    {STATUS_WORDS[g.status].word}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  {g.validationMode === 'freetext' ? 'free text' : `${Object.keys(g.schema?.properties ?? {}).length} fields`}, {g.businessRules.length} rules
                </Table.Td>
                <Table.Td>{steps(g)}</Table.Td>
                <Table.Td>{g.schemaVersion}</Table.Td>
                <Table.Td>{when(g.updatedAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Pager meta={gates.data?.meta} onPage={setPage} of="gates" />
    </Stack>
  );
}

/** What a valid payload goes on to, in words. */
function steps(g: Gate): string {
  const out = [];
  if (g.renderMode !== 'none') out.push(g.renderMode === 'native' ? 'render' : 'render (own API)');
  if (g.approvalMode === 'manual') out.push('approval');
  if (g.deliveryChannels.length) out.push(`deliver to ${g.deliveryChannels.length}`);
  return out.length ? out.join(', ') : 'nothing (completes at validation)';
}
