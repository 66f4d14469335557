import { Alert, Anchor, Button, Code, Group, Loader, Pagination, Paper, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../../../api';
import { useSession } from '../../../session';
import { when } from '../../controls';
import { call, ProblemAlert } from './problems';
import { ended, inZone, StatusBadge, useCanWrite, useChannels, useReports, type Delivery, type Run } from './shared';

const STATUSES = ['queued', 'running', 'rendering', 'delivering', 'completed', 'failed', 'cancelled', 'skipped'];
const PAGE = 20;

const sizeOf = (bytes: number) => (bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
const errorOf = (e: unknown): string | null => {
  if (!e || typeof e !== 'object') return null;
  const { code, message } = e as { code?: string; message?: string };
  return message ? (code ? `${message} (${code})` : message) : (code ?? null);
};

/** Report runs, newest first, with a status filter; followed while any is on its way. */
export function RunsPage() {
  const { team } = useSession();
  const reports = useReports();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<string | null>(null);
  const runs = useQuery({
    queryKey: ['reporting-runs', team?.id, page, status],
    queryFn: () => call(api.GET('/api/reporting/runs', { params: { query: { page, limit: PAGE, sortBy: 'createdAt', sortOrder: 'desc', ...(status ? { status: status as never } : {}) } } })),
    enabled: !!team,
    refetchInterval: (query) => (query.state.data?.data.some((r) => !ended(r.status)) ? 1000 : 10_000),
  });
  const reportName = (id: string) => reports.data?.data.find((r) => r.id === id)?.name ?? 'a deleted report';
  const list = runs.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between" align="end">
        <Title order={2}>Runs</Title>
        <Select
          label="Run status"
          placeholder="Any"
          clearable
          data={STATUSES}
          value={status}
          onChange={(v) => {
            setStatus(v);
            setPage(1);
          }}
          w={200}
        />
      </Group>
      <ProblemAlert error={runs.error} />
      {runs.data && list.length === 0 && <Text c="dimmed">No runs{status ? ` with status ${status}` : ''} yet.</Text>}
      {list.length > 0 && (
        <Table aria-label="Report runs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Run</Table.Th>
              <Table.Th>Report</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Started by</Table.Th>
              <Table.Th>For</Table.Th>
              <Table.Th>Files</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/reporting/runs/${r.id}`} aria-label={`Run ${r.shortId}`}>
                    {r.shortId}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  {reportName(r.reportId)} (v{r.reportVersion})
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={r.status} />
                </Table.Td>
                <Table.Td>{r.trigger}</Table.Td>
                <Table.Td>{inZone(r.scheduledFor, r.timezone)}</Table.Td>
                <Table.Td>{r.outputs.map((o) => o.format.toUpperCase()).join(', ') || '—'}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {(runs.data?.meta?.totalPages ?? 1) > 1 && <Pagination total={runs.data!.meta!.totalPages} value={page} onChange={setPage} aria-label="Pages of runs" />}
    </Stack>
  );
}

/** One run: its datasets, its files to download (signed links of this service) and its deliveries with their attempts. */
export function RunDetail() {
  const { id } = useParams();
  const { team } = useSession();
  const { canWrite } = useCanWrite();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const reports = useReports();
  const run = useQuery({
    queryKey: ['reporting-run', team?.id, id],
    queryFn: () => call(api.GET('/api/reporting/runs/{id}', { params: { path: { id: id! } } })),
    enabled: !!team && !!id,
    refetchInterval: (query) => (query.state.data && ended(query.state.data.status) ? false : 1000),
  });
  const cancel = useMutation({
    mutationFn: () => call(api.POST('/api/reporting/runs/{id}/cancel', { params: { path: { id: id! } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-run'] }),
  });
  const retry = useMutation({
    mutationFn: () => call(api.POST('/api/reporting/runs/{id}/retry', { params: { path: { id: id! } }, body: {} })),
    onSuccess: (accepted) => navigate(`/reporting/runs/${accepted.runId}`),
  });
  const r = run.data;
  if (!r) return run.error ? <ProblemAlert error={run.error} /> : <Loader aria-label="Loading the run" />;
  const report = reports.data?.data.find((x) => x.id === r.reportId);
  const error = errorOf(r.error);
  return (
    <Stack>
      <div>
        <Anchor component={Link} to="/reporting/runs" size="sm">
          Runs
        </Anchor>
        <Title order={2}>Run {r.shortId}</Title>
      </div>
      <Paper withBorder p="md" component="section" aria-label="Run">
        <Stack>
          <Group>
            <StatusBadge status={r.status} />
            {!ended(r.status) && <Loader size="xs" aria-label="The run is on its way" />}
            {r.failedStage && <Text size="sm">failed at {r.failedStage}</Text>}
            {r.skipReason && <Text size="sm">skipped: {r.skipReason}</Text>}
          </Group>
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <Table variant="vertical" layout="fixed" aria-label="About the run" withTableBorder={false}>
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w={200}>Report</Table.Th>
                <Table.Td>
                  {report ? <Anchor component={Link} to={`/reporting/reports/${report.id}`} size="sm">{report.name}</Anchor> : 'a deleted report'}, version {r.reportVersion}
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Started by</Table.Th>
                <Table.Td>
                  {r.trigger}
                  {r.scheduleId && (
                    <>
                      {' '}(<Anchor component={Link} to={`/reporting/schedules/${r.scheduleId}`} size="sm">its schedule</Anchor>)
                    </>
                  )}
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>For</Table.Th>
                <Table.Td>
                  {inZone(r.scheduledFor, r.timezone)} ({r.timezone})
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Ended</Table.Th>
                <Table.Td>{when(r.completedAt, '—')}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Parameters</Table.Th>
                <Table.Td>
                  <Code>{JSON.stringify(r.parameters)}</Code>
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Documents charged</Table.Th>
                <Table.Td>{r.documentsCharged}</Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
          {canWrite && (
            <Group>
              {['queued', 'running', 'rendering'].includes(r.status) && (
                <Button variant="default" color="red" onClick={() => cancel.mutate()} loading={cancel.isPending}>
                  Cancel the run
                </Button>
              )}
              {r.status === 'failed' && (
                <Button variant="default" onClick={() => retry.mutate()} loading={retry.isPending}>
                  Run it again
                </Button>
              )}
            </Group>
          )}
          <ProblemAlert error={cancel.error ?? retry.error} />
        </Stack>
      </Paper>
      <Datasets run={r} />
      <Outputs run={r} />
      <Deliveries run={r} />
    </Stack>
  );
}

function Datasets({ run }: { run: Run }) {
  return (
    <Table aria-label="Datasets">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Dataset</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Rows</Table.Th>
          <Table.Th>Time</Table.Th>
          <Table.Th>Error</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {run.datasets.map((d) => {
          const ds = d as { name: string; status: string; rowCount: number | null; truncated: boolean; durationMs: number | null; error: unknown };
          return (
            <Table.Tr key={ds.name}>
              <Table.Td>{ds.name}</Table.Td>
              <Table.Td>
                <StatusBadge status={ds.status} />
              </Table.Td>
              <Table.Td>{ds.rowCount ?? '—'}{ds.truncated ? ' (cut)' : ''}</Table.Td>
              <Table.Td>{ds.durationMs !== null ? `${ds.durationMs} ms` : '—'}</Table.Td>
              <Table.Td>{errorOf(ds.error) ?? 'none'}</Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

/** The run's files: each a signed link of this service (a click downloads it). */
function Outputs({ run }: { run: Run }) {
  return (
    <Paper withBorder p="md" component="section" aria-label="Outputs">
      <Stack>
        <Title order={3} size="h4">
          Files
        </Title>
        {run.outputs.length === 0 && <Text c="dimmed" size="sm">{ended(run.status) ? 'No files.' : 'The files appear once rendered.'}</Text>}
        {run.outputs.length > 0 && (
          <Table aria-label="Files of the run">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>File</Table.Th>
                <Table.Th>Format</Table.Th>
                <Table.Th>Size</Table.Th>
                <Table.Th>Kept until</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {run.outputs.map((o) => (
                <Table.Tr key={o.id}>
                  <Table.Td>
                    {o.downloadUrl ? (
                      <Anchor href={o.downloadUrl} download={o.filename} aria-label={`Download ${o.filename}`}>
                        {o.filename}
                      </Anchor>
                    ) : (
                      <Text size="sm">{o.filename} (deleted after its retention)</Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    {o.format.toUpperCase()}
                    {o.dataset ? ` (${o.dataset})` : ''}
                  </Table.Td>
                  <Table.Td>
                    {sizeOf(o.bytes)}
                    {o.pageCount !== undefined ? `, ${o.pageCount} page${o.pageCount === 1 ? '' : 's'}` : ''}
                    {o.rowCount !== undefined ? `, ${o.rowCount} rows` : ''}
                  </Table.Td>
                  <Table.Td>{when(o.expiresAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}

/** Where the run's files went: one record per target, each with its attempts; failed ones can be sent again. */
function Deliveries({ run }: { run: Run }) {
  const { team } = useSession();
  const { canWrite } = useCanWrite();
  const channels = useChannels();
  const queries = useQueryClient();
  const deliveries = useQuery({
    queryKey: ['reporting-run-deliveries', team?.id, run.id, run.status],
    queryFn: () => call(api.GET('/api/reporting/runs/{id}/deliveries', { params: { path: { id: run.id } } })),
    enabled: run.channelIds.length > 0,
    refetchInterval: (query) => (query.state.data?.data.some((d) => !ended(d.status)) ? 1000 : false),
  });
  const resend = useMutation({
    mutationFn: (deliveryId: string) => call(api.POST('/api/reporting/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-run-deliveries'] }),
  });
  const channelName = (d: Delivery) => channels.data?.data.find((c) => c.id === d.channelId)?.name ?? 'a deleted channel';
  const list = deliveries.data?.data ?? [];
  return (
    <Paper withBorder p="md" component="section" aria-label="Deliveries">
      <Stack>
        <Title order={3} size="h4">
          Deliveries
        </Title>
        {run.channelIds.length === 0 && <Text c="dimmed" size="sm">This run has no channels: its files are only here.</Text>}
        <ProblemAlert error={deliveries.error ?? resend.error} />
        {run.channelIds.length > 0 && deliveries.data && list.length === 0 && <Text c="dimmed" size="sm">Deliveries start once the files are rendered.</Text>}
        {list.length > 0 && (
          <Table aria-label="Delivery records">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Channel</Table.Th>
                <Table.Th>Target</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Attempts</Table.Th>
                <Table.Th>Error</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((d) => {
                const last = d.attempts.at(-1);
                return (
                  <Table.Tr key={d.id}>
                    <Table.Td>
                      {channelName(d)} ({d.kind})
                    </Table.Td>
                    <Table.Td style={{ wordBreak: 'break-all' }}>{d.target}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={d.status} />
                      {d.note && <Text size="xs">{d.note}</Text>}
                      {d.nextAttemptAt && <Text size="xs">next attempt {when(d.nextAttemptAt)}</Text>}
                    </Table.Td>
                    <Table.Td>
                      {d.attempts.length}
                      {d.attempts.length > 0 && (
                        <Text size="xs" c="dimmed">
                          {d.attempts.map((a) => `#${a.number} ${a.statusCode ?? 'no answer'} in ${a.durationMs} ms`).join('; ')}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>{last?.error ?? 'none'}</Table.Td>
                    <Table.Td>
                      {canWrite && (d.status === 'failed' || d.status === 'skipped') && (
                        <Button size="compact-sm" variant="default" aria-label={`Send again to ${d.target}`} loading={resend.isPending && resend.variables === d.id} onClick={() => resend.mutate(d.id)}>
                          Send again
                        </Button>
                      )}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}
