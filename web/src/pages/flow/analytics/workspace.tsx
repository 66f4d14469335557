import { Badge, Group, Paper, Progress, SimpleGrid, Stack, Table, Text, Title, useMatches } from '@mantine/core';
import { Bar, BarChart, CartesianGrid, Cell, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import { api } from '../../../api';
import { Chart, COLOURS, Figure, FiguresTable, legendText } from '../../../charts';
import { WHOLE, BUCKET_WORDS, bucketLabel, busiest, duration, rate, limit, percentage, PERIOD_DAYS, Shown, usd, useAnswer, when, type Filters } from './shared';

const periodQuery = ({ period, gateId }: Filters) => ({ params: { query: { period, gateId } } });

/** GET /api/flow/analytics/approval-metrics: requests by outcome as a chart, the rate and the decision times as figures. */
export function Approvals({ filters }: { filters: Filters }) {
  const answer = useAnswer(['approval-metrics', filters.period, filters.gateId], () => api.GET('/api/flow/analytics/approval-metrics', periodQuery(filters)));
  return (
    <Shown answer={answer}>
      {(a) => {
        const outcomes = [
          { name: 'Approved', count: a.approved, fill: COLOURS.completed },
          { name: 'Rejected', count: a.rejected, fill: COLOURS.failed },
          { name: 'Expired', count: a.expired, fill: COLOURS.other },
          { name: 'Pending', count: a.pending, fill: COLOURS.waiting },
        ];
        return (
          <SimpleGrid cols={{ base: 1, lg: 2 }} aria-busy={answer.busy || undefined}>
            <Chart
              title="Approval requests"
              summary={
                a.requested === 0
                  ? 'Bar chart of approval requests by outcome: no approval was asked for in this period.'
                  : `Bar chart of approval requests by outcome: ${a.requested} requested; ${outcomes.map((o) => `${o.name} ${o.count}`).join(', ')}.`
              }
              table={<FiguresTable label="Approval requests (figures)" head={['Outcome', 'Requests']} rows={[['Requested', a.requested], ...outcomes.map((o) => [o.name, o.count])]} />}
            >
              <BarChart data={outcomes} height={200} maxBarSize={56} responsive style={{ width: '100%' }} accessibilityLayer={false}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis dataKey="name" tick={{ fontSize: 12 }} />
                <YAxis allowDecimals={false} width={36} tick={{ fontSize: 12 }} />
                <Tooltip />
                <Bar dataKey="count" name="Requests" isAnimationActive={false}>
                  {outcomes.map((o) => (
                    <Cell key={o.name} fill={o.fill} />
                  ))}
                </Bar>
              </BarChart>
            </Chart>
            <SimpleGrid cols={{ base: 1, sm: 3, lg: 1 }}>
              <Figure label="Approval rate" value={rate(a.approvalRate)} note="Approved among the requests closed (approved, rejected or expired)" />
              <Figure label="Median time to decide" value={duration(a.medianDecisionMs)} note="From the request to the approver's decision" />
              <Figure label="90th percentile time to decide" value={duration(a.p90DecisionMs)} note="Nine decisions in ten came sooner" />
            </SimpleGrid>
          </SimpleGrid>
        );
      }}
    </Shown>
  );
}

const CIRCUIT_WORDS = { closed: 'Closed', open: 'Open', half_open: 'Half-open' };
const CIRCUIT_COLOUR = { closed: 'teal', open: 'red', half_open: 'yellow' };

/** GET /api/flow/analytics/infra-health: deliveries and render failures of the period, circuits now. */
export function InfraHealth({ filters }: { filters: Filters }) {
  const answer = useAnswer(['infra-health', filters.period, filters.gateId], () => api.GET('/api/flow/analytics/infra-health', periodQuery(filters)));
  return (
    <Shown answer={answer}>
      {(h) => (
        <Stack aria-busy={answer.busy || undefined}>
          <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }}>
            <Figure label="Deliveries" value={h.deliveries.total} note={`${h.deliveries.completed} delivered, ${h.deliveries.failed} failed, ${h.deliveries.pending} on the way`} />
            <Figure label="Delivery success rate" value={rate(h.deliveries.successRate)} note="Delivered among those that ended" />
            <Figure label="Attempts per delivery" value={h.deliveries.avgAttempts ?? '—'} note="On average, of those attempted" />
            <Figure label="Render failures" value={h.renderFailures} note="Runs that failed in rendering" />
            <Figure label="Open circuits" value={h.circuitBreakers.filter((c) => c.state !== 'closed').length} note={`Of ${h.circuitBreakers.length} ${h.circuitBreakers.length === 1 ? 'gate' : 'gates'}, now`} />
          </SimpleGrid>
          <Paper withBorder p="md" component="section" aria-label="Circuit breakers">
            <Title order={4} size="h5" mb="sm">
              Circuit breakers
            </Title>
            {h.circuitBreakers.length === 0 ? (
              <Text c="dimmed">No gate yet.</Text>
            ) : (
              <Table.ScrollContainer minWidth={560}>
                <Table aria-label="Circuit of each gate">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Gate</Table.Th>
                      <Table.Th>Breaker</Table.Th>
                      <Table.Th>Circuit</Table.Th>
                      <Table.Th>Failures in a row</Table.Th>
                      <Table.Th>Open until</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {h.circuitBreakers.map((c) => (
                      <Table.Tr key={c.gateId}>
                        <Table.Td>{c.name}</Table.Td>
                        <Table.Td>{c.enabled ? 'On' : 'Off'}</Table.Td>
                        <Table.Td>
                          <Badge style={WHOLE} variant="light" color={CIRCUIT_COLOUR[c.state]}>
                            {CIRCUIT_WORDS[c.state]}
                          </Badge>
                        </Table.Td>
                        <Table.Td>{c.consecutiveFailures}</Table.Td>
                        <Table.Td>{when(c.openUntil)}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
            )}
          </Paper>
        </Stack>
      )}
    </Shown>
  );
}

/** GET /api/flow/analytics/combined-timeline: document jobs and Flow runs per bucket, the whole workspace. */
export function CombinedTimeline({ filters }: { filters: Filters }) {
  const { period, granularity } = filters;
  const answer = useAnswer(['combined-timeline', period, granularity], () => api.GET('/api/flow/analytics/combined-timeline', { params: { query: { period, granularity } } }));
  return (
    <Shown answer={answer}>
      {(t) => {
        const data = t.buckets.map((b) => ({ ...b, label: bucketLabel(b.start, t.granularity) }));
        const [one, many] = BUCKET_WORDS[t.granularity];
        return (
          <Chart
            title="Documents and runs over time"
            busy={answer.busy}
            summary={`Line chart of documents and runs per ${one}: ${t.totals.documents} documents and ${t.totals.runs} runs over ${data.length} ${data.length === 1 ? one : many}${busiest(data, (b) => b.documents + b.runs, t.granularity)}.`}
            table={<FiguresTable label="Documents and runs over time (figures)" head={['Start', 'Documents', 'Runs']} rows={data.map((b) => [b.start, b.documents, b.runs])} />}
          >
            <LineChart data={data} height={260} responsive style={{ width: '100%' }} accessibilityLayer={false} margin={{ top: 5, right: 16, bottom: 5, left: 5 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="label" tick={{ fontSize: 12 }} minTickGap={8} />
              <YAxis allowDecimals={false} width={36} tick={{ fontSize: 12 }} />
              <Tooltip />
              <Legend formatter={legendText} />
              <Line dataKey="documents" name="Documents" stroke={COLOURS.rate} strokeWidth={2} dot={data.length <= 31} isAnimationActive={false} />
              <Line dataKey="runs" name="Flow runs" stroke={COLOURS.second} strokeWidth={2} dot={data.length <= 31} isAnimationActive={false} />
            </LineChart>
          </Chart>
        );
      }}
    </Shown>
  );
}

/** The first moment of the period, as the Flow analytics count it: midnight UTC, N−1 days ago. */
function periodStart(days: number, now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1))).toISOString();
}

/** GET /api/documents/analytics over the same days: the documents, their success rate and each template's. */
export function Documents({ filters }: { filters: Filters }) {
  const days = PERIOD_DAYS[filters.period];
  const answer = useAnswer(['documents', days], () => api.GET('/api/documents/analytics', { params: { query: { startDate: periodStart(days) } } }));
  return (
    <Shown answer={answer}>
      {(d) => {
        const templates = d.byTemplate.map((t) => ({ ...t, name: t.templateName ?? 'A deleted template' }));
        const ended = d.completedDocuments + d.failedDocuments;
        return (
          <Stack aria-busy={answer.busy || undefined}>
            <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }}>
              <Figure label="Documents" value={d.totalDocuments} note={`${d.byFormat.pdf ?? 0} PDF, ${d.byFormat.excel ?? 0} Excel`} />
              <Figure label="Documents completed" value={d.completedDocuments} />
              <Figure label="Documents failed" value={d.failedDocuments} />
              <Figure label="Document success rate" value={ended === 0 ? '—' : percentage(d.successRate)} />
              <Figure label="Average generation time" value={d.completedDocuments === 0 ? '—' : duration(d.avgGenerationTimeMs)} />
            </SimpleGrid>
            <Chart
              title="Documents per template"
              summary={templates.length === 0 ? 'Bar chart of documents per template: no document in this period.' : `Bar chart of documents per template: ${templates.map((t) => `${t.name} ${t.total}`).join(', ')}.`}
              table={
                <FiguresTable
                  label="Documents per template (figures)"
                  head={['Template', 'Documents', 'Completed', 'Failed', 'Success rate']}
                  rows={templates.map((t) => [t.name, t.total, t.completed, t.failed, t.completed + t.failed === 0 ? '—' : percentage(t.successRate)])}
                />
              }
            >
              {templates.length === 0 ? (
                <Text c="dimmed">No document in this period.</Text>
              ) : (
                <BarChart data={templates} layout="vertical" height={Math.max(120, 40 * templates.length + 60)} responsive style={{ width: '100%' }} accessibilityLayer={false}>
                  <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                  <XAxis type="number" allowDecimals={false} tick={{ fontSize: 12 }} />
                  <YAxis type="category" dataKey="name" width={140} tick={{ fontSize: 12 }} />
                  <Tooltip />
                  <Legend formatter={legendText} />
                  <Bar dataKey="completed" name="Completed" stackId="t" fill={COLOURS.completed} isAnimationActive={false} />
                  <Bar dataKey="failed" name="Failed" stackId="t" fill={COLOURS.failed} isAnimationActive={false} />
                </BarChart>
              )}
            </Chart>
          </Stack>
        );
      }}
    </Shown>
  );
}

/** GET /api/flow/analytics/team-overview: the workspace now, and its runs and documents of the period. */
export function Team({ filters }: { filters: Filters }) {
  const answer = useAnswer(['team-overview', filters.period], () => api.GET('/api/flow/analytics/team-overview', { params: { query: { period: filters.period } } }));
  return (
    <Shown answer={answer}>
      {(t) => (
        <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }} aria-busy={answer.busy || undefined}>
          <Figure label="Members" value={t.members} note={`${t.pendingInvitations} invited`} />
          <Figure label="API keys" value={t.apiKeys} note="Active" />
          <Figure label="Gates" value={t.gates} note={`${t.activeGates} active`} />
          <Figure label="Runs in the period" value={t.runs} />
          <Figure label="Documents in the period" value={t.documents} />
        </SimpleGrid>
      )}
    </Shown>
  );
}

/** GET /api/flow/analytics/billing-summary: this month's runs against the plan. */
export function Billing() {
  // Two columns of three for the runs beside the bill, one on a small screen.
  const phone = useMatches({ base: true, md: false });
  const answer = useAnswer(['billing-summary'], () => api.GET('/api/flow/analytics/billing-summary'));
  return (
    <Shown answer={answer}>
      {(b) => {
        const share = b.runsIncluded === 0 ? 100 : Math.min(100, (b.runsThisMonth / b.runsIncluded) * 100);
        return (
          <SimpleGrid cols={{ base: 1, md: 3 }}>
            <Paper withBorder p="md" component="section" aria-label="Runs this month" style={phone ? undefined : { gridColumn: 'span 2' }}>
              <Stack gap="xs">
                <Group justify="space-between">
                  <Text size="sm" c="dimmed">
                    Runs this month ({b.month}), {b.planName} plan
                  </Text>
                </Group>
                <Text size="xl" fw={700}>
                  {b.runsThisMonth.toLocaleString('en')} of {b.runsIncluded.toLocaleString('en')} used
                </Text>
                <Progress.Root size="lg">
                  <Progress.Section
                    value={share}
                    withAria={false}
                    role="progressbar"
                    aria-label="Runs used this month"
                    aria-valuemin={0}
                    aria-valuemax={b.runsIncluded}
                    aria-valuenow={b.runsThisMonth}
                    aria-valuetext={`${b.runsThisMonth} of ${b.runsIncluded} runs used`}
                    color={share >= 90 ? 'red' : share >= 70 ? 'yellow' : 'blue'}
                  />
                </Progress.Root>
                <Text size="sm">
                  {b.runsRemaining.toLocaleString('en')} left.{' '}
                  {b.overagePerRunUsd === null
                    ? 'Runs past the allowance are refused on this plan.'
                    : `Runs past the allowance cost ${usd(b.overagePerRunUsd)} each: ${b.overageRuns.toLocaleString('en')} so far, ${usd(b.overageCostUsd)}.`}
                </Text>
              </Stack>
            </Paper>
            <Paper withBorder p="md" component="section" aria-label="Estimated bill">
              <Stack gap={4}>
                <Text size="sm" c="dimmed">
                  Estimated bill this month
                </Text>
                <Text size="xl" fw={700}>
                  {usd(b.estimatedTotalUsd)}
                </Text>
                <Text size="sm">
                  {usd(b.monthlyPriceUsd)} a month{b.overageCostUsd > 0 ? ` + ${usd(b.overageCostUsd)} overage` : ''}.
                </Text>
                <Text size="sm">
                  Gates: {b.gates.used} of {limit(b.gates.max)}; approvers per gate: {limit(b.limits.maxApproversPerGate)}; payloads up to {limit(b.limits.contentLimitChars)} characters; files kept{' '}
                  {b.limits.retentionDays} days.
                </Text>
              </Stack>
            </Paper>
          </SimpleGrid>
        );
      }}
    </Shown>
  );
}

/** GET /api/flow/analytics/plans: the plans on offer, the project's own marked. */
export function Plans({ current }: { current?: string }) {
  const answer = useAnswer(['plans'], () => api.GET('/api/flow/analytics/plans'));
  return (
    <Paper withBorder p="md" component="section" aria-label="Plans">
      <Title order={4} size="h5" mb="sm">
        Plans
      </Title>
      <Shown answer={answer}>
        {(p) => (
          <Table.ScrollContainer minWidth={720}>
            <Table aria-label="Plans on offer">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Plan</Table.Th>
                  <Table.Th>Per month</Table.Th>
                  <Table.Th>Per year</Table.Th>
                  <Table.Th>Runs a month</Table.Th>
                  <Table.Th>Each run beyond</Table.Th>
                  <Table.Th>Gates</Table.Th>
                  <Table.Th>Approvers per gate</Table.Th>
                  <Table.Th>Payload characters</Table.Th>
                  <Table.Th>Files kept</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {p.plans.map((plan) => (
                  <Table.Tr key={plan.id}>
                    <Table.Td>
                      {plan.name}{' '}
                      {plan.id === current && (
                        <Badge style={WHOLE} size="sm" variant="light">
                          Your plan
                        </Badge>
                      )}
                    </Table.Td>
                    <Table.Td>{usd(plan.monthlyPriceUsd)}</Table.Td>
                    <Table.Td>{usd(plan.annualPriceUsd)}</Table.Td>
                    <Table.Td>{plan.runsPerMonth.toLocaleString('en')}</Table.Td>
                    <Table.Td>{plan.overagePerRunUsd === null ? 'Refused' : usd(plan.overagePerRunUsd)}</Table.Td>
                    <Table.Td>{limit(plan.maxGates)}</Table.Td>
                    <Table.Td>{limit(plan.maxApproversPerGate)}</Table.Td>
                    <Table.Td>{limit(plan.contentLimitChars)}</Table.Td>
                    <Table.Td>{plan.retentionDays} days</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Shown>
    </Paper>
  );
}

/** GET /api/flow/analytics/credit-packs: one-time credit packs and monthly document add-ons. */
export function CreditPacks() {
  const answer = useAnswer(['credit-packs'], () => api.GET('/api/flow/analytics/credit-packs'));
  return (
    <Paper withBorder p="md" component="section" aria-label="Credit packs">
      <Title order={4} size="h5" mb="sm">
        Credit packs and add-ons
      </Title>
      <Shown answer={answer}>
        {(c) => (
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <Table aria-label="Credit packs on offer">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Credits</Table.Th>
                  <Table.Th>Price</Table.Th>
                  <Table.Th>Per document</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {c.packs.map((p) => (
                  <Table.Tr key={p.documents}>
                    <Table.Td>{p.documents.toLocaleString('en')}</Table.Td>
                    <Table.Td>{usd(p.priceUsd)}</Table.Td>
                    <Table.Td>{usd(p.pricePerDocumentUsd)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            <Table aria-label="Document add-ons on offer">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Documents a month</Table.Th>
                  <Table.Th>Price a month</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {c.addOns.map((a) => (
                  <Table.Tr key={a.documentsPerMonth}>
                    <Table.Td>{a.documentsPerMonth.toLocaleString('en')}</Table.Td>
                    <Table.Td>{usd(a.priceUsdPerMonth)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </SimpleGrid>
        )}
      </Shown>
    </Paper>
  );
}
