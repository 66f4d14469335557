import { Alert, Anchor, Badge, Button, Code, Group, Modal, Pagination, Select, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, errorText, must, type Job } from '../api';
import { saveAnswer } from '../download';
import { useSession } from '../session';
import { Failure } from './controls';

const STATUS_COLOURS: Record<Job['status'], string> = { queued: 'gray', processing: 'blue', completed: 'green', failed: 'red', cancelled: 'dark' };
const PAGE = 25;

/** The jobs list: statuses update without a reload while any job is still on its way. */
export function DocumentsPage() {
  const { team } = useSession();
  const [status, setStatus] = useState<Job['status'] | null>(null);
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string>();
  const [exportError, setExportError] = useState<string>();
  const jobs = useQuery({
    queryKey: ['jobs', team?.id, status, page],
    queryFn: () => must(api.GET('/api/documents/jobs', { params: { query: { limit: PAGE, offset: (page - 1) * PAGE, ...(status ? { status } : {}) } } })),
    enabled: !!team,
    refetchInterval: (query) => (query.state.data?.jobs.some((j) => j.status === 'queued' || j.status === 'processing') ? 1000 : 10_000),
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Documents</Title>
        <Group>
          <Button component={Link} to="/documents/webhooks" variant="default">
            Webhooks
          </Button>
          <Button
            variant="default"
            onClick={() =>
              void exportJobs(status).then(
                () => setExportError(undefined),
                (e: Error) => setExportError(e.message),
              )
            }
          >
            Export the list (CSV)
          </Button>
        </Group>
      </Group>
      {exportError && <Alert color="red" role="alert">{exportError}</Alert>}
      <Group>
        <Select
          label="Status"
          placeholder="Any"
          clearable
          data={['queued', 'processing', 'completed', 'failed', 'cancelled']}
          value={status}
          onChange={(v) => {
            setStatus(v as Job['status'] | null);
            setPage(1);
          }}
          w={180}
        />
      </Group>
      <Failure error={jobs.error} />
      {jobs.data && jobs.data.jobs.length === 0 && <Text c="dimmed">No documents yet. Generate one from a template.</Text>}
      {jobs.data && jobs.data.jobs.length > 0 && (
        <Table striped aria-label="Document jobs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Created</Table.Th>
              <Table.Th>File</Table.Th>
              <Table.Th>Format</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Download</Table.Th>
              <Table.Th>Details</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {jobs.data.jobs.map((job) => (
              <Table.Tr key={job.jobId}>
                <Table.Td>{new Date(job.createdAt).toLocaleString()}</Table.Td>
                <Table.Td>{job.filename ?? job.jobId}</Table.Td>
                <Table.Td>{job.format}</Table.Td>
                <Table.Td>
                  <Badge color={STATUS_COLOURS[job.status]} variant="light">
                    {job.status}
                  </Badge>
                  {job.errorMessage && (
                    <Text size="xs" c="red">
                      {job.errorCode && <Code>{job.errorCode}</Code>} {job.errorMessage}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  {job.status === 'completed' && job.downloadUrl ? (
                    <Anchor href={job.downloadUrl} aria-label="Download" title={`Download ${job.filename ?? 'the document'}`}>
                      Download
                    </Anchor>
                  ) : job.artefactExpired ? (
                    <Text size="sm" c="dimmed">expired</Text>
                  ) : null}
                </Table.Td>
                <Table.Td>
                  <Button size="compact-sm" variant="default" aria-label={`Details of ${job.filename ?? job.jobId}`} onClick={() => setOpen(job.jobId)}>
                    Details
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {jobs.data && jobs.data.total > PAGE && <Pagination total={Math.ceil(jobs.data.total / PAGE)} value={page} onChange={setPage} aria-label="Pages" />}
      {open && <JobDetail jobId={open} onClose={() => setOpen(undefined)} />}
    </Stack>
  );
}

/** The jobs of the status shown as the API's CSV export, saved as a file. */
async function exportJobs(status: Job['status'] | null): Promise<void> {
  const { data, error, response } = await api.GET('/api/documents/jobs/export', { params: { query: { format: 'csv', ...(status ? { status } : {}) } }, parseAs: 'blob' });
  if (error !== undefined || !data) throw new Error(errorText(error));
  saveAnswer(data as unknown as Blob, response, 'jobs.csv');
}

/**
 * One job: what it was made from, when, its error, and what can be done with it: retry a failed one
 * (a new job with the same input), cancel one on its way, delete it and its file (members; the API
 * refuses viewers anyway).
 */
function JobDetail({ jobId, onClose }: { jobId: string; onClose: () => void }) {
  const { team } = useSession();
  const canEdit = team?.role !== 'viewer';
  const queries = useQueryClient();
  const job = useQuery({
    queryKey: ['job', jobId],
    queryFn: () => must(api.GET('/api/documents/jobs/{jobId}', { params: { path: { jobId } } })),
    refetchInterval: (query) => (query.state.data && ['queued', 'processing'].includes(query.state.data.status) ? 1000 : false),
  });
  const done = async () => {
    await queries.invalidateQueries({ queryKey: ['jobs'] });
    onClose();
  };
  const retry = useMutation({ mutationFn: () => must(api.POST('/api/documents/jobs/{jobId}/retry', { params: { path: { jobId } } })), onSuccess: done });
  const cancel = useMutation({ mutationFn: () => must(api.POST('/api/documents/jobs/{jobId}/cancel', { params: { path: { jobId } } })), onSuccess: () => queries.invalidateQueries({ queryKey: ['job', jobId] }) });
  const remove = useMutation({
    mutationFn: async () => {
      const { error, response } = await api.DELETE('/api/documents/jobs/{jobId}', { params: { path: { jobId } } });
      if (error !== undefined || !response.ok) throw new Error(errorText(error));
    },
    onSuccess: done,
  });
  const failure = retry.error ?? cancel.error ?? remove.error;
  const j = job.data;
  return (
    <Modal opened onClose={onClose} title="Document job" size="lg">
      <Failure error={job.error} />
      {j && (
        <Stack>
          <Group>
            <Badge color={STATUS_COLOURS[j.status]} variant="light">
              {j.status}
            </Badge>
            <Text size="sm">{j.filename ?? j.jobId}</Text>
          </Group>
          {j.errorMessage && (
            <Alert color="red" title="Why it failed">
              {j.errorMessage}
              {j.errorCode && (
                <Text size="sm" mt="xs">
                  Error code <Code>{j.errorCode}</Code> (the API documentation's error catalogue lists it)
                </Text>
              )}
            </Alert>
          )}
          <SimpleGrid cols={2} spacing="xs" component="dl">
            <Text component="dt" fw={500}>Job</Text>
            <Text component="dd" size="sm"><Code>{j.jobId}</Code></Text>
            <Text component="dt" fw={500}>Template version</Text>
            <Text component="dd" size="sm">v{j.templateVersion} ({j.format})</Text>
            <Text component="dt" fw={500}>Created</Text>
            <Text component="dd" size="sm">{new Date(j.createdAt).toLocaleString()}</Text>
            <Text component="dt" fw={500}>Completed</Text>
            <Text component="dd" size="sm">{j.completedAt ? new Date(j.completedAt).toLocaleString() : '—'}</Text>
            {j.expiresAt && (
              <>
                <Text component="dt" fw={500}>Link valid until</Text>
                <Text component="dd" size="sm">{new Date(j.expiresAt).toLocaleString()}</Text>
              </>
            )}
            {j.retryOf && (
              <>
                <Text component="dt" fw={500}>Retry of</Text>
                <Text component="dd" size="sm"><Code>{j.retryOf}</Code></Text>
              </>
            )}
          </SimpleGrid>
          {Object.keys(j.metadata).length > 0 && (
            <Text size="sm">
              Metadata: <Code>{JSON.stringify(j.metadata)}</Code>
            </Text>
          )}
          {failure && <Alert color="red" role="alert">{failure.message}</Alert>}
          <Group>
            {j.status === 'completed' && j.downloadUrl && (
              <Anchor href={j.downloadUrl}>Download</Anchor>
            )}
            {canEdit && j.status === 'failed' && (
              <Button onClick={() => retry.mutate()} loading={retry.isPending}>
                Retry
              </Button>
            )}
            {canEdit && (j.status === 'queued' || j.status === 'processing') && (
              <Button variant="light" onClick={() => cancel.mutate()} loading={cancel.isPending}>
                Cancel
              </Button>
            )}
            {canEdit && (
              <Button color="red" variant="light" onClick={() => remove.mutate()} loading={remove.isPending}>
                Delete
              </Button>
            )}
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
