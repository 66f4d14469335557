import { Alert, Anchor, Badge, Group, Pagination, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, type Job } from '../api';
import { useSession } from '../session';

const STATUS_COLOURS: Record<Job['status'], string> = { queued: 'gray', processing: 'blue', completed: 'green', failed: 'red', cancelled: 'dark' };
const PAGE = 25;

/** The jobs list: statuses update without a reload while any job is still on its way. */
export function DocumentsPage() {
  const { team } = useSession();
  const [status, setStatus] = useState<Job['status'] | null>(null);
  const [page, setPage] = useState(1);
  const jobs = useQuery({
    queryKey: ['jobs', team?.id, status, page],
    queryFn: () => must(api.GET('/api/documents/jobs', { params: { query: { limit: PAGE, offset: (page - 1) * PAGE, ...(status ? { status } : {}) } } })),
    enabled: !!team,
    refetchInterval: (query) => (query.state.data?.jobs.some((j) => j.status === 'queued' || j.status === 'processing') ? 1000 : 10_000),
  });
  return (
    <Stack>
      <Title order={2}>Documents</Title>
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
      {jobs.error && <Alert color="red" role="alert">{jobs.error.message}</Alert>}
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
                      {job.errorMessage}
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
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {jobs.data && jobs.data.total > PAGE && <Pagination total={Math.ceil(jobs.data.total / PAGE)} value={page} onChange={setPage} aria-label="Pages" />}
    </Stack>
  );
}
