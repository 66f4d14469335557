import { Alert, Button, Code, Group, Modal, Paper, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../../api';
import { Failure, when } from '../../controls';
import { useSession } from '../../../session';
import type { Gate, GateVersion } from './model';

const SOURCE_WORDS: Record<GateVersion['source'], string> = { create: 'Created', schema: 'Schema saved', import: 'Imported from a template', settings: 'Validation settings changed' };

/**
 * The gate's schema versions (`GET …/versions`, oldest first; shown newest first), each to view;
 * "Use in the editor" loads one into the builder (saving makes it the next version).
 */
export function Versions({ gate, onUse, readOnly }: { gate: Gate; onUse: (v: GateVersion) => void; readOnly: boolean }) {
  const [shown, setShown] = useState<GateVersion>();
  const versions = useQuery({
    queryKey: ['gate-versions', gate.id, gate.schemaVersion],
    queryFn: () => must(api.GET('/api/flow/gates/{id}/versions', { params: { path: { id: gate.id } } })),
  });
  const list = [...(versions.data?.data ?? [])].reverse();
  return (
    <Paper withBorder p="md" component="section" aria-label="Schema versions">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Schema versions
        </Title>
        <Text size="sm" c="dimmed">
          A version never changes once written; each run records the version it was checked against.
        </Text>
        <Failure error={versions.error} />
        {list.length > 0 && (
          <Table aria-label="Versions">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Version</Table.Th>
                <Table.Th>Made by</Table.Th>
                <Table.Th>Fields</Table.Th>
                <Table.Th>Rules</Table.Th>
                <Table.Th>When</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((v) => (
                <Table.Tr key={v.version}>
                  <Table.Td>
                    {v.version}
                    {v.version === gate.schemaVersion ? ' (current)' : ''}
                  </Table.Td>
                  <Table.Td>{SOURCE_WORDS[v.source]}</Table.Td>
                  <Table.Td>{v.validationMode === 'freetext' ? 'freetext' : Object.keys(v.schema?.properties ?? {}).length}</Table.Td>
                  <Table.Td>{v.businessRules.length}</Table.Td>
                  <Table.Td>{when(v.createdAt)}</Table.Td>
                  <Table.Td>
                    <Button size="compact-sm" variant="default" aria-label={`View version ${v.version}`} onClick={() => setShown(v)}>
                      View
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      {shown && (
        <Modal opened onClose={() => setShown(undefined)} title={`Version ${shown.version}`} size="xl">
          <Stack>
            <Text size="sm">
              {SOURCE_WORDS[shown.source]}, {when(shown.createdAt)}; validation mode {shown.validationMode}.
            </Text>
            <div>
              <Text fw={500} size="sm">
                {shown.validationMode === 'freetext' ? 'Freetext checks' : 'Schema'}
              </Text>
              <Code block aria-label={`Schema of version ${shown.version}`}>
                {JSON.stringify(shown.validationMode === 'freetext' ? shown.freetextConfig : shown.schema, null, 2)}
              </Code>
            </div>
            <div>
              <Text fw={500} size="sm">
                Business rules
              </Text>
              <Code block>{JSON.stringify(shown.businessRules, null, 2)}</Code>
            </div>
            {!readOnly && shown.validationMode === 'variables' && (
              <Group>
                <Button
                  variant="default"
                  onClick={() => {
                    onUse(shown);
                    setShown(undefined);
                  }}
                >
                  Use in the editor
                </Button>
                <Text size="sm" c="dimmed">
                  Its schema and rules replace the editor&apos;s; saving makes them the next version.
                </Text>
              </Group>
            )}
          </Stack>
        </Modal>
      )}
    </Paper>
  );
}

/** "Import from a template": a template's draft variables become the gate's next schema version (the rules stay). */
export function ImportFromTemplate({ gate, onImported }: { gate: Gate; onImported: (g: Gate) => void }) {
  const { team } = useSession();
  const queries = useQueryClient();
  const [templateId, setTemplateId] = useState<string | null>(null);
  const templates = useQuery({ queryKey: ['templates', team?.id, 'for-gates'], queryFn: () => must(api.GET('/api/templates', { params: { query: { limit: 100 } } })) });
  const importSchema = useMutation({
    mutationFn: () => must(api.POST('/api/flow/gates/{id}/import-schema', { params: { path: { id: gate.id } }, body: { templateId: templateId! } })),
    onSuccess: async (updated) => {
      onImported(updated);
      await queries.invalidateQueries({ queryKey: ['gates'] });
    },
  });
  return (
    <Paper withBorder p="md" component="section" aria-label="Import from a template">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Import from a template
        </Title>
        <Text size="sm" c="dimmed">
          The template&apos;s draft variables become the next schema version (dates and pictures as text); the rules stay. Unsaved schema changes here are replaced.
        </Text>
        <Group align="flex-end">
          <Select
            label="Template to import"
            searchable
            w={320}
            nothingFoundMessage={templates.isFetching ? 'Loading…' : 'No template'}
            data={(templates.data?.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
            value={templateId}
            onChange={setTemplateId}
            onDropdownOpen={() => void templates.refetch()}
          />
          <Button variant="default" disabled={!templateId} loading={importSchema.isPending} onClick={() => importSchema.mutate()}>
            Import its variables
          </Button>
        </Group>
        <Failure error={importSchema.error} />
        {importSchema.data && (
          <Alert color="green" role="status">
            Imported: schema version {importSchema.data.schemaVersion}.
          </Alert>
        )}
      </Stack>
    </Paper>
  );
}
