import { Group, SegmentedControl, Select, SimpleGrid, Stack, Text, Title, useMatches } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { FLOW_TABS, SectionTabs } from '../../SectionTabs';
import { GateMetrics, Outcomes, Overview, Throughput, ValidationErrors } from './runs';
import { PERIOD_DAYS, useAnswer, type Filters, type Granularity, type Period } from './shared';
import { Approvals, Billing, CombinedTimeline, CreditPacks, Documents, InfraHealth, Plans, Team } from './workspace';

const PERIODS: Array<{ value: Period; label: string }> = [
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
];
const GRANULARITIES: Array<{ value: Granularity; label: string }> = [
  { value: 'day', label: 'Day' },
  { value: 'week', label: 'Week' },
  { value: 'month', label: 'Month' },
];
const ALL_GATES = 'all';

/** A part of the page: a heading, what it covers, its views. */
function Part({ title, about, children }: { title: string; about: ReactNode; children: ReactNode }) {
  return (
    <Stack component="section" aria-label={title} gap="sm" mt="lg">
      <div>
        <Title order={3} size="h4">
          {title}
        </Title>
        <Text size="sm" c="dimmed">
          {about}
        </Text>
      </div>
      {children}
    </Stack>
  );
}

/**
 * Flow analytics (docs/web.md "Flow analytics"): the twelve GET /api/flow/analytics/* views and the
 * document analytics as charts, figures and tables, for the period, bucket size and gate chosen
 * above them (kept in the address: `?period=7d&granularity=week&gate=<id>`).
 */
export default function AnalyticsArea() {
  const { team } = useSession();
  const [params, setParams] = useSearchParams();
  const period = (params.get('period') ?? '30d') as Period;
  const granularity = (params.get('granularity') ?? 'day') as Granularity;
  const filters: Filters = {
    period: period in PERIOD_DAYS ? period : '30d',
    granularity: GRANULARITIES.some((g) => g.value === granularity) ? granularity : 'day',
    gateId: params.get('gate') ?? undefined,
  };
  const set = (name: string, value: string | null) =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        if (value === null) next.delete(name);
        else next.set(name, value);
        return next;
      },
      { replace: true },
    );
  const gates = useQuery({
    queryKey: ['flow-analytics', team?.id, 'gates'],
    queryFn: () => must(api.GET('/api/flow/gates', { params: { query: { limit: 100, sortBy: 'name', sortOrder: 'asc' } } })),
    enabled: !!team,
  });
  const billing = useAnswer(['billing-summary'], () => api.GET('/api/flow/analytics/billing-summary'));
  // On a phone the controls take the whole width, in smaller type, so "Last 90 days" is not cut.
  const phone = useMatches({ base: true, sm: false });
  const gateName = gates.data?.data.find((g) => g.id === filters.gateId)?.name;
  const scope = filters.gateId ? `the gate ${gateName ?? ''}`.trim() : 'every gate';

  return (
    <Stack gap="xs">
      <SectionTabs label="Flow" tabs={FLOW_TABS} />
      <Title order={2}>Analytics</Title>
      <Group component="section" aria-label="What to show" align="end" gap="lg">
        <SegmentedControl aria-label="Period" data={PERIODS} value={filters.period} onChange={(v) => set('period', v)} fullWidth={phone} size={phone ? 'xs' : 'sm'} w={phone ? '100%' : undefined} />
        <SegmentedControl aria-label="Granularity" data={GRANULARITIES} value={filters.granularity} onChange={(v) => set('granularity', v)} fullWidth={phone} size={phone ? 'xs' : 'sm'} w={phone ? '100%' : undefined} />
        <Select
          label="Gate"
          w={phone ? '100%' : 240}
          data={[{ value: ALL_GATES, label: 'All gates' }, ...(gates.data?.data ?? []).map((g) => ({ value: g.id, label: g.name }))]}
          value={filters.gateId ?? ALL_GATES}
          onChange={(v) => set('gate', v === null || v === ALL_GATES ? null : v)}
          allowDeselect={false}
          searchable
        />
      </Group>
      <Text size="sm" c="dimmed">
        Periods are whole UTC days up to now, today included; weeks start on Monday.
      </Text>

      <Part title="Runs" about={`Runs of ${scope} created in the period.`}>
        <Overview filters={filters} />
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <Throughput filters={filters} />
          <Outcomes filters={filters} />
        </SimpleGrid>
        <ValidationErrors filters={filters} />
        <GateMetrics filters={filters} />
      </Part>

      <Part title="Approvals and delivery" about={`Approval requests and webhook deliveries of ${scope} in the period; circuits as they are now.`}>
        <Approvals filters={filters} />
        <InfraHealth filters={filters} />
      </Part>

      <Part title="Workspace" about="Documents and runs of the whole workspace in the period, whatever the gate chosen.">
        <CombinedTimeline filters={filters} />
        <Documents filters={filters} />
        <Team filters={filters} />
      </Part>

      <Part title="Billing" about="This calendar month (UTC), whatever the period chosen, and the prices on offer.">
        <Billing />
        <Plans current={billing.data?.plan} />
        <CreditPacks />
      </Part>
    </Stack>
  );
}
