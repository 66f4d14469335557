import { Anchor, Button, Checkbox, FileInput, Group, Paper, Select, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api } from '../../../api';
import { useSession } from '../../../session';
import { when } from '../../controls';
import { call, ProblemAlert } from './problems';
import { useCanWrite, useDatasources, type ReportImport } from './shared';

const ACTIONS: Record<string, { word: string; colour: string }> = {
  created: { word: 'imported', colour: 'green.8' },
  overwritten: { word: 'imported (replaced the draft)', colour: 'green.8' },
  skipped: { word: 'skipped', colour: 'gray.7' },
  needs_attention: { word: 'needs attention', colour: 'orange.9' },
  unsupported: { word: 'failed: not supported', colour: 'red.8' },
};

const STATUS: Record<string, string> = { completed: 'Imported', completed_with_warnings: 'Imported, with items to look at', failed: 'Nothing could be imported' };

/** Another tool's export (Metabase, Redash, JasperReports JRXML) turned into draft queries, with what each item became. */
export function ImportsPage() {
  const { team } = useSession();
  const { canWrite } = useCanWrite();
  const queries = useQueryClient();
  const datasources = useDatasources();
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState<string | null>(null);
  const [datasourceId, setDatasourceId] = useState<string | null>(null);
  const [duplicates, setDuplicates] = useState<string>('rename');
  const [dryRun, setDryRun] = useState(false);
  const [shown, setShown] = useState<string>();
  const history = useQuery({
    queryKey: ['reporting-imports', team?.id],
    queryFn: () => call(api.GET('/api/reporting/imports', { params: { query: { limit: 20, page: 1 } } })),
    enabled: !!team,
  });
  const upload = useMutation({
    mutationFn: () => {
      const form = new FormData();
      form.append('file', file!);
      if (format) form.append('format', format);
      if (datasourceId) form.append('datasourceId', datasourceId);
      form.append('duplicateHandling', duplicates);
      form.append('dryRun', String(dryRun));
      return call(api.POST('/api/reporting/imports', { body: form as never, bodySerializer: (body: unknown) => body as FormData }));
    },
    onSuccess: (done) => {
      setShown(undefined);
      void queries.invalidateQueries({ queryKey: ['reporting-imports'] });
      void queries.invalidateQueries({ queryKey: ['reporting-queries'] });
      return done;
    },
  });
  const old = useQuery({
    queryKey: ['reporting-import', team?.id, shown],
    queryFn: () => call(api.GET('/api/reporting/imports/{id}', { params: { path: { id: shown! } } })),
    enabled: !!team && !!shown,
  });
  const outcome = shown ? old.data : upload.data;
  return (
    <Stack>
      <Title order={2}>Imports</Title>
      <Text size="sm" c="dimmed">
        Upload a Metabase question export (YAML, JSON or a zip of a dump), Redash queries (JSON) or a JasperReports JRXML file: each native query becomes a draft query
        object on the datasource you choose, checked like any query. Nothing is published or scheduled.
      </Text>
      {canWrite && (
        <Paper withBorder p="md" component="section" aria-label="Upload">
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              upload.mutate();
            }}
          >
            <Stack>
              <ProblemAlert error={upload.error} title="Not imported" />
              <SimpleGrid cols={{ base: 1, md: 2 }}>
                <FileInput label="Export file" required clearable clearButtonProps={{ 'aria-label': 'Remove the file' }} placeholder="Choose a file" accept=".json,.yaml,.yml,.zip,.jrxml,.xml" value={file} onChange={setFile} />
                <Select
                  label="Format"
                  placeholder="Recognised from the file"
                  clearable
                  data={[
                    { value: 'metabase', label: 'Metabase' },
                    { value: 'redash', label: 'Redash' },
                    { value: 'jrxml', label: 'JasperReports (JRXML)' },
                  ]}
                  value={format}
                  onChange={setFormat}
                />
                <Select label="Datasource" description="The queries run on it" searchable clearable data={(datasources.data ?? []).map((d) => ({ value: d.id, label: `${d.name} (${d.kind})` }))} value={datasourceId} onChange={setDatasourceId} />
                <Select
                  label="When a query of that name exists"
                  allowDeselect={false}
                  data={[
                    { value: 'rename', label: 'Import it as "Name (imported)"' },
                    { value: 'skip', label: 'Skip it' },
                    { value: 'overwrite', label: "Replace the existing query's draft" },
                  ]}
                  value={duplicates}
                  onChange={(v) => setDuplicates(v ?? 'rename')}
                />
              </SimpleGrid>
              <Checkbox label="Dry run: only show what would be imported" checked={dryRun} onChange={(e) => setDryRun(e.currentTarget.checked)} />
              <Group>
                <Button type="submit" loading={upload.isPending} disabled={!file}>
                  Import
                </Button>
              </Group>
            </Stack>
          </form>
        </Paper>
      )}
      {outcome && <Outcome result={outcome} />}
      <Paper withBorder p="md" component="section" aria-label="Earlier imports">
        <Stack>
          <Title order={3} size="h4">
            Earlier imports
          </Title>
          <ProblemAlert error={history.error ?? old.error} />
          {history.data && history.data.data.length === 0 && <Text c="dimmed">No imports yet.</Text>}
          {(history.data?.data.length ?? 0) > 0 && (
            <Table aria-label="Imports">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>File</Table.Th>
                  <Table.Th>Format</Table.Th>
                  <Table.Th>Outcome</Table.Th>
                  <Table.Th>Items</Table.Th>
                  <Table.Th>When</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {history.data!.data.map((i) => (
                  <Table.Tr key={i.id}>
                    <Table.Td>
                      <Anchor component="button" type="button" onClick={() => setShown(i.id)} aria-label={`Items of ${i.filename} (${i.shortId})`}>
                        {i.filename}
                      </Anchor>
                      {i.dryRun ? ' (dry run)' : ''}
                    </Table.Td>
                    <Table.Td>{i.format}</Table.Td>
                    <Table.Td>{STATUS[i.status] ?? i.status}</Table.Td>
                    <Table.Td>{i.itemCount}</Table.Td>
                    <Table.Td>{when(i.createdAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Stack>
      </Paper>
    </Stack>
  );
}

/** What each item of the file became, with its messages. */
function Outcome({ result }: { result: ReportImport }) {
  return (
    <Paper withBorder p="md" component="section" aria-label="Import outcome">
      <Stack>
        <Title order={3} size="h4">
          {result.filename}: {STATUS[result.status] ?? result.status}
          {result.dryRun ? ' (dry run: nothing was made)' : ''}
        </Title>
        <Table aria-label="Imported items">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Item</Table.Th>
              <Table.Th>Outcome</Table.Th>
              <Table.Th>Messages</Table.Th>
              <Table.Th>Made</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {result.items.map((item, i) => {
              const action = ACTIONS[item.action] ?? { word: item.action, colour: 'gray' };
              return (
                <Table.Tr key={i}>
                  <Table.Td>
                    {item.source.name}
                    <Text size="xs" c="dimmed">
                      {item.source.type}
                      {item.source.ref ? ` ${item.source.ref}` : ''}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" fw={600} c={action.colour}>
                      {action.word}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {item.warnings.length === 0 ? (
                      'none'
                    ) : (
                      <Stack gap={2}>
                        {item.warnings.map((w, j) => (
                          <Text key={j} size="sm">
                            <strong>{w.code}</strong>: {w.message}
                          </Text>
                        ))}
                      </Stack>
                    )}
                    {item.suggestedSchedule && <Text size="xs">Its schedule was {item.suggestedSchedule.cron} ({item.suggestedSchedule.timezone}): make it under Schedules.</Text>}
                  </Table.Td>
                  <Table.Td>
                    <Stack gap={2}>
                      {item.queryId && (
                        <Anchor component={Link} to={`/reporting/queries/${item.queryId}`} size="sm">
                          the query
                        </Anchor>
                      )}
                      {item.reportId && (
                        <Anchor component={Link} to={`/reporting/reports/${item.reportId}`} size="sm">
                          the report
                        </Anchor>
                      )}
                      {item.templateId && (
                        <Anchor component={Link} to={`/templates/${item.templateId}`} size="sm">
                          the template
                        </Anchor>
                      )}
                      {!item.queryId && !item.reportId && !item.templateId && '—'}
                    </Stack>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Stack>
    </Paper>
  );
}
