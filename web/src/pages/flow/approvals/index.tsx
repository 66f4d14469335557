import { Alert, Anchor, Badge, Button, Group, Paper, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { Failure, Pager, when } from '../../controls';
import { Fact, Facts } from '../runs/Facts';
import { APPROVAL_STATUS, payloadSummary, type Approval } from '../runs/words';

const PAGE = 10;

/** "in 3 hours", "in 12 minutes", "passed": how long is left until a deadline. */
function timeLeft(iso: string | null): string {
  if (!iso) return '';
  const ms = new Date(iso).getTime() - Date.now();
  if (ms <= 0) return 'passed';
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'in less than a minute';
  if (minutes < 90) return `in ${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `in ${hours} hours`;
  return `in ${Math.round(hours / 24)} days`;
}

/**
 * The signed-in approver's inbox (docs/web.md "Flow: runs and the approvals inbox"): the approvals
 * waiting for this person in the chosen project (`GET /api/flow/approvals`), each with its gate, run,
 * a one-line summary of the payload, the deadline, a comment and "Approve" / "Reject"; then what they
 * decided, latest first. The API accepts a decision only from the approver on record.
 */
export default function ApprovalsArea() {
  const { team, user } = useSession();
  const [pendingPage, setPendingPage] = useState(1);
  const [decidedPage, setDecidedPage] = useState(1);
  const [done, setDone] = useState<string>();
  const pending = useQuery({
    queryKey: ['my-approvals', team?.id, 'pending', pendingPage],
    queryFn: () => must(api.GET('/api/flow/approvals', { params: { query: { status: 'pending', page: pendingPage, limit: PAGE } } })),
    enabled: !!team,
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
  const decided = useQuery({
    queryKey: ['my-approvals', team?.id, 'decided', decidedPage],
    queryFn: () => must(api.GET('/api/flow/approvals', { params: { query: { status: 'decided', page: decidedPage, limit: PAGE } } })),
    enabled: !!team,
    placeholderData: keepPreviousData,
  });
  const waiting = pending.data?.data ?? [];
  const past = decided.data?.data ?? [];
  return (
    <Stack>
      <Title order={2}>Approvals</Title>
      <Text c="dimmed" size="sm">
        Runs of {team?.name ?? 'this project'} waiting for a decision from {user?.email ?? 'you'}. Each approver decides once; a run goes on when its gate has the approvals it needs.
      </Text>
      {done && (
        <Alert color="green" role="status" withCloseButton closeButtonLabel="Dismiss" onClose={() => setDone(undefined)}>
          {done}
        </Alert>
      )}
      <Paper withBorder p="md" component="section" aria-label="Waiting for you">
        <Title order={3} size="h4" mb="sm">
          Waiting for you
        </Title>
        <Failure error={pending.error} />
        {pending.data && waiting.length === 0 && <Text c="dimmed">Nothing waits for your decision.</Text>}
        <Stack>
          {waiting.map((a) => (
            <PendingApproval key={a.id} approval={a} onDecided={setDone} />
          ))}
        </Stack>
        <Pager meta={pending.data?.meta} of="approvals waiting" onPage={setPendingPage} />
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="Decided">
        <Title order={3} size="h4" mb="sm">
          Decided
        </Title>
        <Failure error={decided.error} />
        {decided.data && past.length === 0 && <Text c="dimmed">No decision yet.</Text>}
        {past.length > 0 && (
          <Table.ScrollContainer minWidth={640}>
            <Table aria-label="Your decisions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Run</Table.Th>
                  <Table.Th>Gate</Table.Th>
                  <Table.Th>Decision</Table.Th>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Comment</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {past.map((a) => {
                  const s = APPROVAL_STATUS[a.status];
                  return (
                    <Table.Tr key={a.id}>
                      <Table.Td>
                        <Anchor component={Link} to={`/flow/runs/${a.runId}`} ff="monospace" size="sm">
                          {a.runShortId}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>{a.gateName}</Table.Td>
                      <Table.Td>
                        <Badge color={s.colour} variant="light">
                          {s.word}
                        </Badge>
                      </Table.Td>
                      <Table.Td>{when(a.decidedAt, '—')}</Table.Td>
                      <Table.Td style={{ wordBreak: 'break-word' }}>{a.comment ?? <Text size="sm" c="dimmed">none</Text>}</Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <Pager meta={decided.data?.meta} of="decisions" onPage={setDecidedPage} />
      </Paper>
    </Stack>
  );
}

/** One approval waiting for the person: what it is about, until when, and the decision with a comment. */
function PendingApproval({ approval: a, onDecided }: { approval: Approval; onDecided: (message: string) => void }) {
  const { team } = useSession();
  // The API takes decisions from members and above; a viewer decides through the e-mailed link.
  const canDecide = team?.role !== 'viewer';
  const queries = useQueryClient();
  const [comment, setComment] = useState('');
  // The payload's summary comes from the run itself (a person signed in reads it; the list carries no payload).
  const run = useQuery({
    queryKey: ['flow-run-summary', a.runId],
    queryFn: () => must(api.GET('/api/flow/runs/{id}', { params: { path: { id: a.runId } } })),
    staleTime: 60_000,
  });
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'reject') =>
      must(
        decision === 'approve'
          ? api.POST('/api/flow/approvals/{id}/approve', { params: { path: { id: a.id } }, body: comment.trim() ? { comment: comment.trim() } : {} })
          : api.POST('/api/flow/approvals/{id}/reject', { params: { path: { id: a.id } }, body: comment.trim() ? { comment: comment.trim() } : {} }),
      ),
    onSuccess: async (answer) => {
      onDecided(`${answer.decision === 'approved' ? 'Approved' : 'Rejected'} run ${a.runShortId} of ${a.gateName}.`);
      await Promise.all([queries.invalidateQueries({ queryKey: ['my-approvals'] }), queries.invalidateQueries({ queryKey: ['flow-run'] })]);
    },
    // Decided meanwhile (elsewhere, or its window closed): the list is read again so it shows as it is.
    onError: () => queries.invalidateQueries({ queryKey: ['my-approvals'] }),
  });
  return (
    <Paper withBorder p="md" component="article" aria-label={`Approval of run ${a.runShortId}`}>
      <Stack gap="sm">
        <Group justify="space-between" align="start">
          <div>
            <Text fw={600}>{a.gateName}</Text>
            <Anchor component={Link} to={`/flow/runs/${a.runId}`} size="sm">
              Run <span style={{ fontFamily: 'var(--mantine-font-family-monospace)' }}>{a.runShortId}</span>
            </Anchor>
          </div>
          <Badge color="yellow" variant="light">
            Waiting for you
          </Badge>
        </Group>
        <Facts>
          <Fact term="Summary">{run.data ? payloadSummary(run.data.inputPayload) : run.error ? run.error.message : 'Reading the payload…'}</Fact>
          <Fact term="Asked">{when(a.createdAt)}</Fact>
          <Fact term="Deadline">{a.expiresAt ? `${when(a.expiresAt)} (${timeLeft(a.expiresAt)})` : 'none'}</Fact>
        </Facts>
        {!canDecide && (
          <Text size="sm" c="dimmed">
            As a viewer of this project you decide through the link in the e-mail you were sent.
          </Text>
        )}
        {canDecide && (
          <>
            <Textarea label="Comment" description="Optional; the run's page shows it with your decision." maxLength={1000} autosize minRows={2} value={comment} onChange={(e) => setComment(e.currentTarget.value)} />
            <Failure error={decide.error} />
            <Group>
              <Button color="green" onClick={() => decide.mutate('approve')} loading={decide.isPending && decide.variables === 'approve'} disabled={decide.isPending}>
                Approve
              </Button>
              <Button color="red" variant="light" onClick={() => decide.mutate('reject')} loading={decide.isPending && decide.variables === 'reject'} disabled={decide.isPending}>
                Reject
              </Button>
            </Group>
          </>
        )}
      </Stack>
    </Paper>
  );
}
