import { Code, Group, Paper, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../api';
import { Failure } from './controls';

type Period = '7d' | '30d' | '90d' | '1y';

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div role="group" aria-label={label}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg">
        {value}
      </Text>
    </div>
  );
}

/** The template's documents over a period (GET /api/templates/:id/analytics): counts, success rate, time. */
export function TemplateAnalytics({ id }: { id: string }) {
  const [period, setPeriod] = useState<Period>('30d');
  const analytics = useQuery({
    queryKey: ['template-analytics', id, period],
    queryFn: () => must(api.GET('/api/templates/{id}/analytics', { params: { path: { id }, query: { period } } })),
    placeholderData: keepPreviousData,
  });
  const a = analytics.data;
  return (
    <Paper withBorder p="md" component="section" aria-label="Analytics">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Analytics
          </Title>
          <SegmentedControl
            size="xs"
            aria-label="Period"
            value={period}
            onChange={(v) => setPeriod(v as Period)}
            data={[
              { value: '7d', label: '7 days' },
              { value: '30d', label: '30 days' },
              { value: '90d', label: '90 days' },
              { value: '1y', label: 'A year' },
            ]}
          />
        </Group>
        <Failure error={analytics.error} />
        {a && (
          <SimpleGrid cols={{ base: 2, sm: 4 }}>
            <Figure label="Documents in the period" value={String(a.usage.total)} />
            <Figure label="Success rate" value={a.usage.total ? `${a.performance.successRate}%` : '—'} />
            <Figure label="Failed" value={String(a.performance.failedCount)} />
            <Figure label="Average generation time" value={a.usage.total ? `${(a.performance.avgGenerationTimeMs / 1000).toFixed(1)} s` : '—'} />
          </SimpleGrid>
        )}
      </Stack>
    </Paper>
  );
}

/**
 * The fields an automation platform shows for this template (GET /api/templates/:id/automation-fields):
 * those of the newest published version, the draft's before the first publish.
 */
export function AutomationFields({ id, latest }: { id: string; latest: number }) {
  const fields = useQuery({ queryKey: ['automation-fields', id, latest], queryFn: async () => (await must(api.GET('/api/templates/{id}/automation-fields', { params: { path: { id } } }))).fields });
  return (
    <Paper withBorder p="md" component="section" aria-label="Automation fields">
      <Stack gap="xs">
        <Title order={3} size="h4">
          Automation fields
        </Title>
        <Text size="sm" c="dimmed">
          What Zapier, Make or n8n show as the form behind “generate a document”: the variables of {latest > 0 ? `version ${latest}` : 'the draft (nothing is published yet)'}.
        </Text>
        <Failure error={fields.error} />
        {fields.data && fields.data.length === 0 && <Text size="sm">The template declares no variables.</Text>}
        {fields.data && fields.data.length > 0 && (
          <Table aria-label="Automation fields of the template">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Label</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Required</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {fields.data.map((f) => (
                <Table.Tr key={f.key}>
                  <Table.Td>{f.label}</Table.Td>
                  <Table.Td>
                    <Code>{f.key}</Code>
                  </Table.Td>
                  <Table.Td>{f.children?.length ? `${f.type} of ${f.children.map((c) => c.label).join(', ')}` : f.type}</Table.Td>
                  <Table.Td>{f.required ? 'yes' : 'no'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}
