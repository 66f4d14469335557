import { Alert, Code, Group, Paper, Progress, SegmentedControl, SimpleGrid, Stack, Table, Text, Title, useMatches } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import type { components } from '@formwork/client';
import { api, must } from '../api';
import { Chart, COLOURS, dayLabel, Figure, legendText } from '../charts';
import { useSession } from '../session';

type Analytics = components['schemas']['DocumentAnalytics'];

const DAY_MS = 86_400_000;
const PERIODS = [
  { value: 'month', label: 'This month' },
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
];

/** The first UTC day of the period: the 1st of this month, or `days` days up to today. */
function periodStart(period: string, now = new Date()): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  if (period === 'month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return new Date(today - (Number(period) - 1) * DAY_MS);
}

const percent = (n: number) => `${Number.isInteger(n) ? n : n.toFixed(1)}%`;
const rateOf = (completed: number, failed: number) => (completed + failed === 0 ? null : Math.round((completed / (completed + failed)) * 1000) / 10);

/**
 * Usage (docs/web.md "Usage"): this month's free documents against the quota and the credits left
 * (GET /api/documents/quota), and over a chosen period the documents per day, the success rate and
 * the documents per template (GET /api/documents/analytics) as charts, each with its figures in a
 * table a screen reader reads.
 */
export default function UsagePage() {
  const { team } = useSession();
  const [period, setPeriod] = useState('month');
  const start = useMemo(() => periodStart(period), [period]);
  const quota = useQuery({ queryKey: ['quota', team?.id], queryFn: () => must(api.GET('/api/documents/quota')), enabled: !!team });
  const analytics = useQuery({
    queryKey: ['usage', team?.id, start.toISOString()],
    queryFn: () => must(api.GET('/api/documents/analytics', { params: { query: { startDate: start.toISOString() } } })),
    enabled: !!team,
  });
  const error = quota.error ?? analytics.error;
  return (
    <Stack>
      <Title order={2}>Usage</Title>
      {error && <Alert color="red" role="alert">{error.message}</Alert>}
      {quota.data && <Quota quota={quota.data} />}
      <Group justify="space-between" align="end">
        <Title order={3} size="h4">
          Documents
        </Title>
        <SegmentedControl aria-label="Period" data={PERIODS} value={period} onChange={setPeriod} />
      </Group>
      {analytics.data && <Figures analytics={analytics.data} start={start} />}
    </Stack>
  );
}

function Quota({ quota }: { quota: components['schemas']['DocumentQuota'] }) {
  const { limit, used, remaining } = quota.freeDocuments;
  const share = limit === 0 ? 100 : Math.min(100, (used / limit) * 100);
  const resets = new Date(quota.resetsAt).toLocaleDateString(undefined, { day: 'numeric', month: 'long', timeZone: 'UTC' });
  // Two of three columns where there are three; on a phone the grid has one, and spanning two would add a column off the screen.
  const span = useMatches({ base: undefined, md: 'span 2' });
  return (
    <SimpleGrid cols={{ base: 1, md: 3 }}>
      <Paper withBorder p="md" component="section" aria-label="Free documents this month" style={{ gridColumn: span }}>
        <Stack gap="xs">
          <Text size="sm" c="dimmed">
            Free documents this month
          </Text>
          <Text size="xl" fw={700}>
            {used} of {limit} used
          </Text>
          <Progress.Root size="lg">
            <Progress.Section
              value={share}
              withAria={false}
              role="progressbar"
              aria-label="Free documents used this month"
              aria-valuemin={0}
              aria-valuemax={limit}
              aria-valuenow={used}
              aria-valuetext={`${used} of ${limit} free documents used`}
              color={share >= 90 ? 'red' : share >= 70 ? 'yellow' : 'blue'}
            />
          </Progress.Root>
          <Text size="sm">
            {remaining} left; the quota starts again on {resets}. Free documents carry a watermark; failed and cancelled ones are given back.
          </Text>
        </Stack>
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="Credits">
        <Stack gap="xs">
          <Text size="sm" c="dimmed">
            Credits left
          </Text>
          <Text size="xl" fw={700}>
            {quota.credits.balance}
          </Text>
          <Text size="sm">A document made with a credit (the API&apos;s <Code>useCredit</Code>) carries no watermark.</Text>
        </Stack>
      </Paper>
    </SimpleGrid>
  );
}

function Figures({ analytics, start }: { analytics: Analytics; start: Date }) {
  const days = useMemo(() => {
    const counted = new Map(analytics.byDate.map((d) => [d.date, d]));
    const out: Array<{ date: string; day: string; count: number; completed: number; failed: number; other: number; rate: number | null }> = [];
    for (let t = start.getTime(); t <= Date.now(); t += DAY_MS) {
      const date = new Date(t).toISOString().slice(0, 10);
      const d = counted.get(date) ?? { date, count: 0, completed: 0, failed: 0 };
      out.push({ date, day: dayLabel(date), count: d.count, completed: d.completed, failed: d.failed, other: d.count - d.completed - d.failed, rate: rateOf(d.completed, d.failed) });
    }
    return out;
  }, [analytics, start]);
  const templates = analytics.byTemplate.map((t) => ({ ...t, name: t.templateName ?? 'A deleted template' }));
  const busiest = days.reduce((a, b) => (b.count > a.count ? b : a), days[0]);
  const rated = days.filter((d) => d.rate !== null);
  const other = analytics.totalDocuments - analytics.completedDocuments - analytics.failedDocuments;
  return (
    <Stack>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        <Figure label="Documents" value={analytics.totalDocuments} />
        <Figure label="Completed" value={analytics.completedDocuments} />
        <Figure label="Failed" value={analytics.failedDocuments} />
        <Figure label="Success rate" value={analytics.completedDocuments + analytics.failedDocuments === 0 ? '—' : percent(analytics.successRate)} />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Chart
          title="Documents per day"
          summary={`Bar chart of documents per day: ${analytics.totalDocuments} over ${days.length} days${busiest && busiest.count > 0 ? `, most on ${busiest.day} (${busiest.count})` : ''}.`}
          table={
            <Table aria-label="Documents per day (figures)">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Day</Table.Th>
                  <Table.Th>Documents</Table.Th>
                  <Table.Th>Completed</Table.Th>
                  <Table.Th>Failed</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {days
                  .filter((d) => d.count > 0)
                  .map((d) => (
                    <Table.Tr key={d.date}>
                      <Table.Td>{d.date}</Table.Td>
                      <Table.Td>{d.count}</Table.Td>
                      <Table.Td>{d.completed}</Table.Td>
                      <Table.Td>{d.failed}</Table.Td>
                    </Table.Tr>
                  ))}
              </Table.Tbody>
            </Table>
          }
        >
          <BarChart data={days} height={260} responsive style={{ width: '100%' }} accessibilityLayer={false}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="day" tick={{ fontSize: 12 }} minTickGap={8} />
            <YAxis allowDecimals={false} width={36} tick={{ fontSize: 12 }} />
            <Tooltip />
            <Legend formatter={legendText} />
            <Bar dataKey="completed" name="Completed" stackId="day" fill={COLOURS.completed} isAnimationActive={false} />
            <Bar dataKey="failed" name="Failed" stackId="day" fill={COLOURS.failed} isAnimationActive={false} />
            {other > 0 && <Bar dataKey="other" name="On the way or cancelled" stackId="day" fill={COLOURS.other} isAnimationActive={false} />}
          </BarChart>
        </Chart>
        <Chart
          title="Success rate per day"
          summary={
            rated.length === 0
              ? 'Line chart of the success rate per day: no document has ended in this period.'
              : `Line chart of the success rate per day: ${percent(analytics.successRate)} over the period, from ${percent(Math.min(...rated.map((d) => d.rate!)))} to ${percent(Math.max(...rated.map((d) => d.rate!)))} on the days with documents.`
          }
          table={
            <Table aria-label="Success rate per day (figures)">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Day</Table.Th>
                  <Table.Th>Success rate</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rated.map((d) => (
                  <Table.Tr key={d.date}>
                    <Table.Td>{d.date}</Table.Td>
                    <Table.Td>{percent(d.rate!)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          }
        >
          <LineChart data={days} height={260} responsive style={{ width: '100%' }} accessibilityLayer={false} margin={{ top: 5, right: 16, bottom: 5, left: 5 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="day" tick={{ fontSize: 12 }} minTickGap={8} />
            <YAxis domain={[0, 100]} unit="%" width={48} tick={{ fontSize: 12 }} />
            <Tooltip formatter={(v) => (typeof v === 'number' ? percent(v) : String(v))} />
            <Line dataKey="rate" name="Success rate" stroke={COLOURS.rate} strokeWidth={2} connectNulls dot isAnimationActive={false} />
          </LineChart>
        </Chart>
      </SimpleGrid>
      <Paper withBorder p="md" component="section" aria-label="Per template">
        <Title order={4} size="h5" mb="sm">
          Per template
        </Title>
        {templates.length === 0 ? (
          <Text c="dimmed">No documents in this period.</Text>
        ) : (
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            {/* On a phone the table scrolls in its box; the page itself never does. */}
            <Table.ScrollContainer minWidth={420}>
              <Table aria-label="Documents per template">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Template</Table.Th>
                    <Table.Th>Documents</Table.Th>
                    <Table.Th>Completed</Table.Th>
                    <Table.Th>Failed</Table.Th>
                    <Table.Th>Success rate</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {templates.map((t) => (
                    <Table.Tr key={t.templateId}>
                      <Table.Td>{t.name}</Table.Td>
                      <Table.Td>{t.total}</Table.Td>
                      <Table.Td>{t.completed}</Table.Td>
                      <Table.Td>{t.failed}</Table.Td>
                      <Table.Td>{t.completed + t.failed === 0 ? '—' : percent(t.successRate)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            <div role="img" aria-label={`Bar chart of documents per template: ${templates.map((t) => `${t.name} ${t.total}`).join(', ')}.`}>
              <BarChart data={templates} layout="vertical" height={Math.max(120, 40 * templates.length + 60)} responsive style={{ width: '100%' }} accessibilityLayer={false}>
                <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                <XAxis type="number" allowDecimals={false} tick={{ fontSize: 12 }} />
                <YAxis type="category" dataKey="name" width={140} tick={{ fontSize: 12 }} />
                <Tooltip />
                <Legend formatter={legendText} />
                <Bar dataKey="completed" name="Completed" stackId="t" fill={COLOURS.completed} isAnimationActive={false} />
                <Bar dataKey="failed" name="Failed" stackId="t" fill={COLOURS.failed} isAnimationActive={false} />
              </BarChart>
            </div>
          </SimpleGrid>
        )}
      </Paper>
    </Stack>
  );
}
