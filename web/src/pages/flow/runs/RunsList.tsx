import { Anchor, Badge, Button, Group, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { Failure, Pager, when } from '../../controls';
import { FLOW_TABS, SectionTabs } from '../../SectionTabs';
import { MOVING, RUN_STATUS, runStatus, SOURCES, type RunStatus } from './words';

const PAGE = 25;

/** The project's gates by id, for names in the list and the "Gate" filter (the first 100; others show their id). */
export function useGateNames() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['gate-names', team?.id],
    queryFn: () => must(api.GET('/api/flow/gates', { params: { query: { limit: 100, sortBy: 'name', sortOrder: 'asc' } } })),
    select: (page) => new Map(page.data.map((g) => [g.id, g.name])),
    enabled: !!team,
  });
}

/** A day (`YYYY-MM-DD`, the person's calendar) as the instant it starts, or the next day's start for an end. */
function dayStart(day: string, next = false): string | undefined {
  const [y, m, d] = day.split('-').map(Number);
  if (!y || !m || !d) return undefined;
  return new Date(y, m - 1, d + (next ? 1 : 0)).toISOString();
}

/**
 * Flow's runs (docs/web.md "Flow: runs and the approvals inbox"): newest first, filtered by status,
 * source, gate and the days they were made in; the filters live in the address, so a filtered list
 * can be linked to (`/flow/runs?gate=<id>`, the gate's page does). Read again every 2 s while a run shown is on its way.
 */
export function RunsList() {
  const { team } = useSession();
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  const source = params.get('source') ?? '';
  const gate = params.get('gate') ?? '';
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const page = Number(params.get('page') ?? '1') || 1;
  const gates = useGateNames();
  const set = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete('page');
    setParams(next, { replace: true });
  };
  const query = {
    page,
    limit: PAGE,
    ...(status ? { status: status as RunStatus } : {}),
    ...(source ? { source: source as 'rest' | 'mcp' } : {}),
    ...(from && dayStart(from) ? { from: dayStart(from) } : {}),
    ...(to && dayStart(to, true) ? { to: dayStart(to, true) } : {}),
  };
  const runs = useQuery({
    queryKey: ['flow-runs', team?.id, gate, query],
    queryFn: () =>
      gate
        ? must(api.GET('/api/flow/gates/{gateId}/runs', { params: { path: { gateId: gate }, query } }))
        : must(api.GET('/api/flow/runs', { params: { query } })),
    enabled: !!team,
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.data.some((r) => MOVING.has(r.status) || r.status === 'review_required') ? 2000 : false),
  });
  const list = runs.data?.data ?? [];
  const filtered = !!(status || source || gate || from || to);
  return (
    <Stack>
      <SectionTabs label="Flow" tabs={FLOW_TABS} />
      <Title order={2}>Runs</Title>
      <Paper withBorder p="md" component="section" aria-label="Filters">
        <Group align="end" wrap="wrap">
          <Select
            label="Status"
            placeholder="Any"
            clearable
            w={200}
            data={Object.entries(RUN_STATUS).map(([value, s]) => ({ value, label: s.word }))}
            value={status || null}
            onChange={(v) => set('status', v)}
          />
          <Select
            label="Source"
            placeholder="Any"
            clearable
            w={140}
            data={Object.entries(SOURCES).map(([value, label]) => ({ value, label }))}
            value={source || null}
            onChange={(v) => set('source', v)}
          />
          <Select
            label="Gate"
            placeholder="Any"
            clearable
            searchable
            w={220}
            data={[...(gates.data ?? new Map<string, string>())].map(([value, label]) => ({ value, label }))}
            value={gate || null}
            onChange={(v) => set('gate', v)}
          />
          <TextInput type="date" label="Created from" w={170} value={from} max={to || undefined} onChange={(e) => set('from', e.currentTarget.value)} />
          <TextInput type="date" label="Created to" w={170} value={to} min={from || undefined} onChange={(e) => set('to', e.currentTarget.value)} />
          {filtered && (
            <Button variant="subtle" onClick={() => setParams(new URLSearchParams(), { replace: true })}>
              Clear the filters
            </Button>
          )}
        </Group>
      </Paper>
      <Failure error={runs.error} />
      {runs.data && list.length === 0 && <Text c="dimmed">{filtered ? 'No run matches these filters.' : 'No runs yet: submissions to a gate appear here.'}</Text>}
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={720}>
          <Table aria-label="Runs" aria-busy={runs.isFetching} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Run</Table.Th>
                <Table.Th>Gate</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Source</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Ended</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((r) => {
                const shown = runStatus(r.status);
                return (
                  <Table.Tr key={r.id}>
                    <Table.Td>
                      <Anchor component={Link} to={`/flow/runs/${r.id}`} ff="monospace" size="sm">
                        {r.shortId}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{gates.data?.get(r.gateId) ?? <Text size="sm" c="dimmed">a deleted gate</Text>}</Table.Td>
                    <Table.Td>
                      <Badge color={shown.colour} variant="light">
                        {shown.word}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{SOURCES[r.source] ?? r.source}</Table.Td>
                    <Table.Td>{when(r.createdAt)}</Table.Td>
                    <Table.Td>{when(r.completedAt, '—')}</Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Group justify="space-between">
        {runs.data?.meta && (
          <Text size="sm" c="dimmed">
            {runs.data.meta.total} {runs.data.meta.total === 1 ? 'run' : 'runs'}
          </Text>
        )}
        <Pager meta={runs.data?.meta} of="runs" onPage={(p) => setParams((prev) => { const next = new URLSearchParams(prev); next.set('page', String(p)); return next; })} />
      </Group>
    </Stack>
  );
}
