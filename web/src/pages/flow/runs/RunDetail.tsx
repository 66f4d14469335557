import { Alert, Anchor, Badge, Button, Code, Grid, Group, Loader, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, errorText, must } from '../../../api';
import { saveAnswer } from '../../../download';
import { useSession } from '../../../session';
import { Failure, when } from '../../controls';
import { FLOW_TABS, SectionTabs } from '../../SectionTabs';
import { Fact, Facts } from './Facts';
import { useGateNames } from './RunsList';
import { APPROVAL_STATUS, deliveryStatus, MOVING, payloadFields, runStatus, SOURCES, type Delivery, type Run } from './words';

const PdfPreview = lazy(() => import('../../../preview/PdfPreview'));

/**
 * One run (docs/web.md "Flow: runs and the approvals inbox"): what it is, its payload (readable, raw
 * JSON one click away), each validation step with its errors, the rendered document in the app's PDF
 * viewer (its bytes read through the API, from this origin), who was asked to approve and who decided
 * what, when and with which comment, and the deliveries with every attempt and "Retry" for a failed one.
 * Read again every second while the run is on its way.
 */
export function RunDetail() {
  const { id = '' } = useParams();
  const { team } = useSession();
  const gates = useGateNames();
  // Deliveries are read beside the run: while one is on its way (a retry too) the run is followed as well.
  const [status, setStatus] = useState<string>();
  const deliveries = useQuery({
    queryKey: ['flow-run-deliveries', team?.id, id, status],
    queryFn: () => must(api.GET('/api/flow/runs/{id}/deliveries', { params: { path: { id } } })),
    enabled: !!team && !!status,
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.data.some((d) => d.status === 'pending' || d.status === 'delivering') ? 1000 : false),
  });
  const sent = deliveries.data?.data ?? [];
  const deliveriesMoving = sent.some((d) => d.status === 'pending' || d.status === 'delivering');
  // A run failed by its deliveries becomes completed once a retry delivered the last one: a moment after the record says so.
  const completing = sent.length > 0 && sent.every((d) => d.status === 'completed');
  const run = useQuery({
    queryKey: ['flow-run', team?.id, id],
    queryFn: () => must(api.GET('/api/flow/runs/{id}', { params: { path: { id } } })),
    enabled: !!team,
    refetchInterval: (q) => {
      const s = q.state.data?.status;
      return s && (MOVING.has(s) || s === 'review_required' || deliveriesMoving || (s === 'failed' && completing)) ? 1000 : false;
    },
  });
  const r = run.data;
  if (r && r.status !== status) setStatus(r.status);
  const shown = r && runStatus(r.status);
  return (
    <Stack>
      <SectionTabs label="Flow" tabs={FLOW_TABS} />
      <Anchor component={Link} to="/flow/runs" size="sm">
        <span aria-hidden="true">← </span>All runs
      </Anchor>
      <Failure error={run.error} />
      {!r && !run.error && <Loader aria-label="Loading the run" />}
      {r && shown && (
        <>
          <Group gap="sm" align="center">
            <Title order={2}>Run {r.shortId}</Title>
            <Badge color={shown.colour} variant="light" size="lg" role="status" aria-label="Run status">
              {shown.word}
            </Badge>
          </Group>
          {r.error != null && (
            <Alert color="red" role="alert" title="What went wrong">
              {typeof r.error === 'string' ? r.error : JSON.stringify(r.error)}
            </Alert>
          )}
          <Paper withBorder p="md" component="section" aria-label="About the run">
            <SimpleGrid cols={{ base: 1, md: 2 }} spacing="xs">
              <Facts>
                <Fact term="Gate">
                  {gates.data?.has(r.gateId) ? (
                    <Anchor component={Link} to={`/flow/gates/${r.gateId}`}>
                      {gates.data.get(r.gateId)}
                    </Anchor>
                  ) : (
                    'a deleted gate'
                  )}
                </Fact>
                <Fact term="Schema version">{r.schemaVersion}</Fact>
                <Fact term="Source">{SOURCES[r.source] ?? r.source}</Fact>
                <Fact term="Run id">
                  <Code>{r.id}</Code>
                </Fact>
              </Facts>
              <Facts>
                <Fact term="Created">{when(r.createdAt)}</Fact>
                <Fact term="Ended">{when(r.completedAt, 'not yet')}</Fact>
                {r.approvalStatus && <Fact term="Approval">{APPROVAL_STATUS[r.approvalStatus as keyof typeof APPROVAL_STATUS]?.word ?? r.approvalStatus}</Fact>}
                {r.deliveryStatus && <Fact term="Delivery">{DELIVERY_WORDS[r.deliveryStatus] ?? r.deliveryStatus}</Fact>}
              </Facts>
            </SimpleGrid>
          </Paper>
          <Grid gap="md" align="start">
            <Grid.Col span={{ base: 12, lg: r.artefactUrl ? 7 : 12 }}>
              <Stack>
                <Payload run={r} />
                <Validation run={r} />
              </Stack>
            </Grid.Col>
            {r.artefactUrl && (
              <Grid.Col span={{ base: 12, lg: 5 }}>
                <Document run={r} />
              </Grid.Col>
            )}
          </Grid>
          <Approvals run={r} />
          <Deliveries deliveries={deliveries} />
        </>
      )}
    </Stack>
  );
}

/** The payload as a table of fields and values, or as the raw JSON. */
function Payload({ run }: { run: Run }) {
  const [raw, setRaw] = useState(false);
  const fields = payloadFields(run.inputPayload);
  return (
    <Paper withBorder p="md" component="section" aria-label="Payload">
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h4">
          Payload
        </Title>
        <Button size="xs" variant="default" onClick={() => setRaw(!raw)} aria-pressed={raw}>
          {raw ? 'Show as fields' : 'Show raw JSON'}
        </Button>
      </Group>
      {raw ? (
        <Code block aria-label="Raw JSON of the payload" style={{ maxHeight: 480, overflow: 'auto' }}>
          {JSON.stringify(run.inputPayload, null, 2)}
        </Code>
      ) : (
        <Table aria-label="Payload fields" withRowBorders>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Field</Table.Th>
              <Table.Th>Value</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {fields.map(([field, value]) => (
              <Table.Tr key={field}>
                <Table.Td ff="monospace" fz="sm">
                  {field}
                </Table.Td>
                <Table.Td style={{ wordBreak: 'break-word' }}>{value}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Paper>
  );
}

const DELIVERY_WORDS: Record<string, string> = { delivering: 'On its way', completed: 'Delivered', failed: 'Failed' };

const LAYER_NAMES: Record<string, string> = { schema: 'Schema', freetext: 'Text', business_rules: 'Business rules' };
const STEP_WORDS: Record<string, { word: string; colour: string }> = {
  pass: { word: 'Passed', colour: 'green' },
  fail: { word: 'Failed', colour: 'red' },
  error: { word: 'Error', colour: 'orange' },
  skipped: { word: 'Skipped', colour: 'gray' },
};

/** Each layer's verdict, then every step (the schema or freetext layer, each rule) with its errors. */
function Validation({ run }: { run: Run }) {
  const v = run.validation;
  return (
    <Paper withBorder p="md" component="section" aria-label="Validation">
      <Title order={3} size="h4" mb="sm">
        Validation
      </Title>
      <Group gap="md" mb="sm">
        {Object.entries(v.layers).map(([layer, status]) => (
          <Group key={layer} gap={6}>
            <Text size="sm" fw={500}>
              {LAYER_NAMES[layer] ?? layer}
            </Text>
            <Badge color={STEP_WORDS[status]?.colour ?? 'gray'} variant="light">
              {STEP_WORDS[status]?.word ?? status}
            </Badge>
          </Group>
        ))}
        {v.durationMs !== undefined && (
          <Text size="sm" c="dimmed">
            checked in {Math.round(v.durationMs * 10) / 10} ms against schema version {run.schemaVersion}
          </Text>
        )}
      </Group>
      <Table aria-label="Validation steps">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Step</Table.Th>
            <Table.Th>Result</Table.Th>
            <Table.Th>Errors</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(v.steps ?? []).map((step, i) => (
            <Table.Tr key={`${step.name}-${i}`}>
              <Table.Td>
                <Text size="sm">{step.ruleId ? `Rule: ${step.name}` : `${LAYER_NAMES[step.name] ?? step.name} layer`}</Text>
                {step.expression && (
                  <Code fz="xs" style={{ wordBreak: 'break-all' }}>
                    {step.expression}
                  </Code>
                )}
              </Table.Td>
              <Table.Td>
                <Badge color={STEP_WORDS[step.status]?.colour ?? 'gray'} variant="light">
                  {STEP_WORDS[step.status]?.word ?? step.status}
                </Badge>
              </Table.Td>
              <Table.Td>
                {step.errors.length === 0 ? (
                  <Text size="sm" c="dimmed">
                    none
                  </Text>
                ) : (
                  <Stack gap={2} component="ul" m={0} p={0} style={{ listStyle: 'none' }}>
                    {step.errors.map((e, j) => (
                      <Text component="li" size="sm" key={j}>
                        <Code>{e.field}</Code> {e.message} <Text span c="dimmed" size="xs">({e.code})</Text>
                      </Text>
                    ))}
                  </Stack>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Paper>
  );
}

/** The rendered artefact, read through the API (never from the storage's origin): a PDF page by page, a workbook to save. */
function Document({ run }: { run: Run }) {
  const file = useQuery({
    queryKey: ['flow-run-artefact', run.id],
    queryFn: async () => {
      const { data, error, response } = await api.GET('/api/flow/runs/{id}/artefact', { params: { path: { id: run.id } }, parseAs: 'arrayBuffer' });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return { bytes: data as unknown as ArrayBuffer, type: response.headers.get('Content-Type') ?? '', response };
    },
    staleTime: Infinity,
  });
  const isPdf = file.data?.type.startsWith('application/pdf');
  return (
    <Paper withBorder component="section" aria-label="Document" aria-busy={file.isFetching}>
      <Group justify="space-between" p="sm">
        <Title order={3} size="h4">
          Document
        </Title>
        {file.data && (
          <Button size="xs" variant="default" onClick={() => saveAnswer(new Blob([file.data.bytes], { type: file.data.type }), file.data.response, `${run.shortId}.${isPdf ? 'pdf' : 'xlsx'}`)}>
            Download
          </Button>
        )}
      </Group>
      {file.error && (
        <Alert color="red" role="alert" m="sm">
          {file.error.message}
        </Alert>
      )}
      {file.data && !isPdf && (
        <Text size="sm" p="sm">
          An Excel workbook: &quot;Download&quot; saves it.
        </Text>
      )}
      <Suspense fallback={<Loader m="sm" aria-label="Loading the document" />}>{file.data && isPdf && <PdfPreview pdf={file.data.bytes} />}</Suspense>
    </Paper>
  );
}

/** Who was asked, who decided what, when, and with which comment. */
function Approvals({ run }: { run: Run }) {
  const approvals = useQuery({
    queryKey: ['flow-run-approvals', run.id, run.status, run.approvalStatus],
    queryFn: () => must(api.GET('/api/flow/runs/{id}/approvals', { params: { path: { id: run.id } } })),
  });
  const { team } = useSession();
  const resend = useMutation({
    mutationFn: () => must(api.POST('/api/flow/approvals/resend/{runId}', { params: { path: { runId: run.id } } })),
  });
  const list = approvals.data?.data ?? [];
  if (!approvals.error && list.length === 0) return null;
  return (
    <Paper withBorder p="md" component="section" aria-label="Approvals">
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h4">
          Approvals
        </Title>
        {run.status === 'review_required' && team?.role !== 'viewer' && (
          <Button size="xs" variant="default" onClick={() => resend.mutate()} loading={resend.isPending}>
            E-mail the approvers again
          </Button>
        )}
      </Group>
      {resend.data && (
        <Alert color="green" role="status" mb="sm">
          A fresh link went to {resend.data.sentCount} of {resend.data.totalApprovers} {resend.data.totalApprovers === 1 ? 'approver' : 'approvers'}; earlier links stop working.
        </Alert>
      )}
      {resend.error && (
        <Alert color="red" role="alert" mb="sm">
          {resend.error.message}
        </Alert>
      )}
      <Failure error={approvals.error} />
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={560}>
          <Table aria-label="Decisions">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Approver</Table.Th>
                <Table.Th>Decision</Table.Th>
                <Table.Th>When</Table.Th>
                <Table.Th>Comment</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((a) => {
                const s = APPROVAL_STATUS[a.status];
                return (
                  <Table.Tr key={a.id}>
                    <Table.Td>
                      <Text size="sm">{a.approverName ?? a.approverEmail}</Text>
                      {a.approverName && (
                        <Text size="xs" c="dimmed">
                          {a.approverEmail}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <Badge color={s.colour} variant="light">
                        {s.word}
                      </Badge>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{a.decidedAt ? when(a.decidedAt) : a.status === 'pending' ? `until ${when(a.expiresAt, '—')}` : '—'}</Text>
                    </Table.Td>
                    <Table.Td style={{ wordBreak: 'break-word' }}>{a.comment ?? <Text size="sm" c="dimmed">none</Text>}</Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Paper>
  );
}

/** The run's deliveries, each with its attempts; a failed one can be sent again. */
function Deliveries({ deliveries }: { deliveries: UseQueryResult<{ data: Delivery[] }> }) {
  const { team } = useSession();
  const canRetry = team?.role !== 'viewer';
  const queries = useQueryClient();
  const retry = useMutation({
    mutationFn: (deliveryId: string) => must(api.POST('/api/flow/deliveries/{id}/retry', { params: { path: { id: deliveryId } } })),
    onSuccess: () => Promise.all([queries.invalidateQueries({ queryKey: ['flow-run-deliveries'] }), queries.invalidateQueries({ queryKey: ['flow-run'] })]),
  });
  const list = deliveries.data?.data ?? [];
  if (!deliveries.error && list.length === 0) return null;
  return (
    <Paper withBorder p="md" component="section" aria-label="Deliveries">
      <Title order={3} size="h4" mb="sm">
        Deliveries
      </Title>
      <Failure error={deliveries.error} />
      {retry.error && (
        <Alert color="red" role="alert" mb="sm">
          {retry.error.message}
        </Alert>
      )}
      <Stack>
        {list.map((d) => (
          <DeliveryCard
            key={d.id}
            delivery={d}
            onRetry={canRetry && d.status === 'failed' ? () => retry.mutate(d.id) : undefined}
            retrying={retry.isPending && retry.variables === d.id}
          />
        ))}
      </Stack>
    </Paper>
  );
}

function DeliveryCard({ delivery: d, onRetry, retrying }: { delivery: Delivery; onRetry?: () => void; retrying: boolean }) {
  const shown = deliveryStatus(d);
  return (
    <Paper withBorder p="sm" component="article" aria-label={`Delivery to ${d.url}`}>
      <Group justify="space-between" mb="xs" wrap="nowrap" align="start">
        <div style={{ minWidth: 0 }}>
          <Group gap="xs">
            <Badge color={shown.colour} variant="light">
              {shown.word}
            </Badge>
            <Text size="sm">{d.eventType}</Text>
          </Group>
          <Text size="sm" c="dimmed" style={{ wordBreak: 'break-all' }}>
            to {d.url}
          </Text>
        </div>
        {onRetry && (
          <Button size="xs" onClick={onRetry} loading={retrying} aria-label={`Retry the delivery to ${d.url}`}>
            Retry
          </Button>
        )}
      </Group>
      <Table aria-label={`Attempts to ${d.url}`}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Attempt</Table.Th>
            <Table.Th>Time</Table.Th>
            <Table.Th>HTTP status</Table.Th>
            <Table.Th>Error</Table.Th>
            <Table.Th>Duration</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {d.attempts.length === 0 && (
            <Table.Tr>
              <Table.Td colSpan={5}>
                <Text size="sm" c="dimmed">
                  No attempt yet.
                </Text>
              </Table.Td>
            </Table.Tr>
          )}
          {d.attempts.map((a) => (
            <Table.Tr key={a.number}>
              <Table.Td>{a.number}</Table.Td>
              <Table.Td>{new Date(a.at).toLocaleString()}</Table.Td>
              <Table.Td>{a.statusCode ?? 'no answer'}</Table.Td>
              <Table.Td>
                <Text size="sm" c={a.error ? 'red' : undefined} style={{ wordBreak: 'break-word' }}>
                  {a.error ?? 'none'}
                </Text>
              </Table.Td>
              <Table.Td>{a.durationMs} ms</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {d.nextAttemptAt && (
        <Text size="xs" c="dimmed" mt="xs">
          Next automatic attempt {when(d.nextAttemptAt)}
        </Text>
      )}
    </Paper>
  );
}
