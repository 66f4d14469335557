import { Badge, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Bar, BarChart, CartesianGrid, Cell, Legend, Tooltip, XAxis, YAxis } from 'recharts';
import { api } from '../../../api';
import { Chart, COLOURS, Figure, FiguresTable, legendText } from '../../../charts';
import { WHOLE, BUCKET_WORDS, bucketLabel, busiest, duration, rate, Shown, useAnswer, when, type Answer, type Filters } from './shared';

/** Run statuses in words, in the order a run moves through them (domain/flow/run-status.ts). */
const STATUS_WORDS = {
  validated: 'Validated',
  rendering: 'Rendering',
  review_required: 'In review',
  approved: 'Approved',
  delivering: 'Delivering',
  completed: 'Completed',
  failed: 'Failed',
  validation_failed: 'Failed validation',
  rejected: 'Rejected',
  expired: 'Expired',
} satisfies Record<keyof Answer<'/api/flow/analytics/run-outcomes'>['byStatus'], string>;

const STATUS_COLOURS: Partial<Record<keyof typeof STATUS_WORDS, string>> = {
  completed: COLOURS.completed,
  failed: COLOURS.failed,
  validation_failed: COLOURS.invalid,
  rejected: COLOURS.failed,
  expired: COLOURS.other,
  review_required: COLOURS.waiting,
  approved: COLOURS.rate,
};

const periodQuery = ({ period, gateId }: Filters) => ({ params: { query: { period, gateId } } });

/** GET /api/flow/analytics/overview: the period's runs and rates as figures. */
export function Overview({ filters }: { filters: Filters }) {
  const answer = useAnswer(['overview', filters.period, filters.gateId], () => api.GET('/api/flow/analytics/overview', periodQuery(filters)));
  return (
    <Shown answer={answer}>
      {(o) => (
        <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }} aria-busy={answer.busy || undefined}>
          <Figure label="Total runs" value={o.totals.runs} note={`${o.totals.inProgress} on the way, ${o.totals.inReview} in review`} />
          <Figure label="Runs completed" value={o.totals.completed} note={`${o.totals.failed} failed, ${o.totals.rejected} rejected, ${o.totals.expired} expired`} />
          <Figure label="Success rate" value={rate(o.successRate)} note="Completed among the runs that ended" />
          <Figure label="Validation pass rate" value={rate(o.validationPassRate)} note={`${o.totals.validationFailed} failed validation`} />
          <Figure label="Average time to complete" value={duration(o.avgTimeToCompleteMs)} note={`${o.activeGates} active ${o.activeGates === 1 ? 'gate' : 'gates'}`} />
        </SimpleGrid>
      )}
    </Shown>
  );
}

/** GET /api/flow/analytics/throughput: runs per day, week or month, by how they ended. */
export function Throughput({ filters }: { filters: Filters }) {
  const { period, granularity, gateId } = filters;
  const answer = useAnswer(['throughput', period, granularity, gateId], () => api.GET('/api/flow/analytics/throughput', { params: { query: { period, granularity, gateId } } }));
  return (
    <Shown answer={answer}>
      {(t) => {
        const data = t.buckets.map((b) => ({ ...b, label: bucketLabel(b.start, t.granularity), other: b.runs - b.completed - b.failed - b.validationFailed }));
        const total = data.reduce((n, b) => n + b.runs, 0);
        const others = data.some((b) => b.other > 0);
        const [one, many] = BUCKET_WORDS[t.granularity];
        return (
          <Chart
            title="Runs over time"
            busy={answer.busy}
            summary={`Bar chart of runs per ${one}: ${total} over ${data.length} ${data.length === 1 ? one : many}${busiest(data, (b) => b.runs, t.granularity)}.`}
            table={
              <FiguresTable
                label="Runs over time (figures)"
                head={['Start', 'Runs', 'Completed', 'Failed', 'Failed validation']}
                rows={data.map((b) => [b.start, b.runs, b.completed, b.failed, b.validationFailed])}
              />
            }
          >
            <BarChart data={data} height={260} maxBarSize={56} responsive style={{ width: '100%' }} accessibilityLayer={false}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="label" tick={{ fontSize: 12 }} minTickGap={8} />
              <YAxis allowDecimals={false} width={36} tick={{ fontSize: 12 }} />
              <Tooltip />
              <Legend formatter={legendText} />
              <Bar dataKey="completed" name="Completed" stackId="b" fill={COLOURS.completed} isAnimationActive={false} />
              <Bar dataKey="failed" name="Failed" stackId="b" fill={COLOURS.failed} isAnimationActive={false} />
              <Bar dataKey="validationFailed" name="Failed validation" stackId="b" fill={COLOURS.invalid} isAnimationActive={false} />
              {others && <Bar dataKey="other" name="Other (on the way, in review, rejected, expired)" stackId="b" fill={COLOURS.other} isAnimationActive={false} />}
            </BarChart>
          </Chart>
        );
      }}
    </Shown>
  );
}

/** GET /api/flow/analytics/run-outcomes: every status, and where the runs came from. */
export function Outcomes({ filters }: { filters: Filters }) {
  const answer = useAnswer(['run-outcomes', filters.period, filters.gateId], () => api.GET('/api/flow/analytics/run-outcomes', periodQuery(filters)));
  return (
    <Shown answer={answer}>
      {(o) => {
        const statuses = (Object.keys(STATUS_WORDS) as Array<keyof typeof STATUS_WORDS>).map((s) => ({ status: s, name: STATUS_WORDS[s], runs: o.byStatus[s] }));
        const shown = statuses.filter((s) => s.runs > 0);
        return (
          <Chart
            title="Run outcomes"
            busy={answer.busy}
            summary={
              o.total === 0
                ? 'Bar chart of runs by status: no run in this period.'
                : `Bar chart of runs by status: ${o.total} runs; ${shown.map((s) => `${s.name} ${s.runs}`).join(', ')}. ${o.bySource.rest} through the API, ${o.bySource.mcp} through MCP.`
            }
            table={
              <>
                <FiguresTable label="Run outcomes (figures)" head={['Status', 'Runs']} rows={statuses.map((s) => [s.name, s.runs])} />
                <FiguresTable label="Runs by source (figures)" head={['Source', 'Runs']} rows={[['API', o.bySource.rest], ['MCP', o.bySource.mcp]]} />
              </>
            }
          >
            {shown.length === 0 ? (
              <Text c="dimmed">No run in this period.</Text>
            ) : (
              <BarChart data={shown} layout="vertical" height={Math.max(140, 34 * shown.length + 50)} responsive style={{ width: '100%' }} accessibilityLayer={false}>
                <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                <XAxis type="number" allowDecimals={false} tick={{ fontSize: 12 }} />
                <YAxis type="category" dataKey="name" width={120} tick={{ fontSize: 12 }} />
                <Tooltip />
                <Bar dataKey="runs" name="Runs" isAnimationActive={false}>
                  {shown.map((s) => (
                    <Cell key={s.status} fill={STATUS_COLOURS[s.status] ?? COLOURS.rate} />
                  ))}
                </Bar>
              </BarChart>
            )}
            <Text size="sm" c="dimmed" mt="xs">
              Submitted through the API: {o.bySource.rest}; through MCP: {o.bySource.mcp}.
            </Text>
          </Chart>
        );
      }}
    </Shown>
  );
}

/** GET /api/flow/analytics/validation-errors: which fields fail most, by code and by layer. */
export function ValidationErrors({ filters }: { filters: Filters }) {
  const answer = useAnswer(['validation-errors', filters.period, filters.gateId], () => api.GET('/api/flow/analytics/validation-errors', periodQuery(filters)));
  return (
    <Shown answer={answer}>
      {(v) => {
        const fields = v.byField.map((f) => ({ name: f.field ?? '(no field)', count: f.count }));
        return (
          <SimpleGrid cols={{ base: 1, lg: 2 }} aria-busy={answer.busy || undefined}>
            <Chart
              title="Validation errors by field"
              summary={
                fields.length === 0
                  ? 'Bar chart of validation errors by field: no run failed validation in this period.'
                  : `Bar chart of validation errors by field: ${v.totalErrors} errors in ${v.failedRuns} runs; ${fields.map((f) => `${f.name} ${f.count}`).join(', ')}.`
              }
              table={<FiguresTable label="Validation errors by field (figures)" head={['Field', 'Errors']} rows={fields.map((f) => [f.name, f.count])} />}
            >
              {fields.length === 0 ? (
                <Text c="dimmed">No run failed validation in this period.</Text>
              ) : (
                <BarChart data={fields} layout="vertical" height={Math.max(140, 34 * fields.length + 50)} responsive style={{ width: '100%' }} accessibilityLayer={false}>
                  <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                  <XAxis type="number" allowDecimals={false} tick={{ fontSize: 12 }} />
                  <YAxis type="category" dataKey="name" width={140} tick={{ fontSize: 12 }} />
                  <Tooltip />
                  <Bar dataKey="count" name="Errors" fill={COLOURS.invalid} isAnimationActive={false} />
                </BarChart>
              )}
            </Chart>
            <Paper withBorder p="md" component="section" aria-label="Validation errors by code">
              <Title order={4} size="h5" mb="sm">
                Validation errors by code
              </Title>
              <Stack gap="sm">
                <Text size="sm">
                  {v.failedRuns} {v.failedRuns === 1 ? 'run' : 'runs'} failed validation with {v.totalErrors} {v.totalErrors === 1 ? 'error' : 'errors'}: {v.byLayer.schema} at the schema,{' '}
                  {v.byLayer.business_rules} at the business rules.
                </Text>
                {v.byCode.length > 0 && (
                  <Table aria-label="Errors by code">
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Code</Table.Th>
                        <Table.Th>Errors</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {v.byCode.map((c) => (
                        <Table.Tr key={c.code ?? ''}>
                          <Table.Td>{c.code ?? '(no code)'}</Table.Td>
                          <Table.Td>{c.count}</Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                )}
              </Stack>
            </Paper>
          </SimpleGrid>
        );
      }}
    </Shown>
  );
}

const GATE_STATUS_COLOUR: Record<string, string> = { active: 'teal', paused: 'yellow', archived: 'gray' };

/** GET /api/flow/analytics/gate-metrics: every live gate's runs of the period, as a table. */
export function GateMetrics({ filters }: { filters: Filters }) {
  const answer = useAnswer(['gate-metrics', filters.period, filters.gateId], () => api.GET('/api/flow/analytics/gate-metrics', periodQuery(filters)));
  return (
    <Paper withBorder p="md" component="section" aria-label="Gate metrics" aria-busy={answer.busy || undefined}>
      <Title order={4} size="h5" mb="sm">
        Gate metrics
      </Title>
      <Shown answer={answer}>
        {(g) =>
          g.gates.length === 0 ? (
            <Text c="dimmed">No gate yet.</Text>
          ) : (
            <Table.ScrollContainer minWidth={720}>
              <Table aria-label="Runs per gate" striped>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Gate</Table.Th>
                    <Table.Th>Status</Table.Th>
                    <Table.Th>Runs</Table.Th>
                    <Table.Th>Completed</Table.Th>
                    <Table.Th>Failed</Table.Th>
                    <Table.Th>Failed validation</Table.Th>
                    <Table.Th>Success rate</Table.Th>
                    <Table.Th>Last run</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {g.gates.map((gate) => (
                    <Table.Tr key={gate.gateId}>
                      <Table.Td>{gate.name}</Table.Td>
                      <Table.Td>
                        <Badge style={WHOLE} variant="light" color={GATE_STATUS_COLOUR[gate.status] ?? 'gray'}>
                          {gate.status}
                        </Badge>
                      </Table.Td>
                      <Table.Td>{gate.runs}</Table.Td>
                      <Table.Td>{gate.completed}</Table.Td>
                      <Table.Td>{gate.failed}</Table.Td>
                      <Table.Td>{gate.validationFailed}</Table.Td>
                      <Table.Td>{rate(gate.successRate)}</Table.Td>
                      <Table.Td>{when(gate.lastRunAt)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </Shown>
    </Paper>
  );
}
