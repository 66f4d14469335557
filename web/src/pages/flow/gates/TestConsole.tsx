import { Alert, Badge, Button, Grid, Group, Input, Paper, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../../api';
import { CodeEditor } from './CodeEditor';
import type { TestResult } from './model';
import { Failure } from '../../controls';

const STATUS_COLOURS: Record<string, string> = { pass: 'green', fail: 'red', error: 'orange', skipped: 'gray' };
const LAYER_WORDS: Record<string, string> = { schema: 'Schema', business_rules: 'Business rules' };

/**
 * The test console (docs/web.md "Flow: gates"): a sample payload and "Test", which runs the gate's
 * dry run (`POST /api/flow/gates/:id/test`: nothing recorded, any status) against the saved
 * version, and shows the verdict, each layer, each step and each error.
 */
export function TestConsole({ gateId, freetext, initialSample, savedVersion, unsaved }: { gateId: string | undefined; freetext: boolean; initialSample: string; savedVersion?: number; unsaved: boolean }) {
  const [sample, setSample] = useState(initialSample);
  const [parseError, setParseError] = useState<string>();
  const test = useMutation({
    mutationFn: (payload: unknown) =>
      must(api.POST('/api/flow/gates/{id}/test', { params: { path: { id: gateId! } }, body: payload as Record<string, unknown> })),
  });
  const run = () => {
    if (freetext) return test.mutate(sample);
    try {
      const payload: unknown = JSON.parse(sample);
      setParseError(undefined);
      test.mutate(payload);
    } catch {
      setParseError('The sample payload is not valid JSON.');
    }
  };
  return (
    <Paper withBorder p="md" component="section" aria-label="Test console">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Test console
        </Title>
        {!gateId ? (
          <Text size="sm" c="dimmed">
            Create the gate to try payloads against it.
          </Text>
        ) : (
          <>
            <Text size="sm" c="dimmed">
              Runs the saved gate{savedVersion ? ` (schema version ${savedVersion})` : ''} on a sample, recording nothing.
              {unsaved ? ' Save your changes to test them.' : ''}
            </Text>
            <Grid>
              <Grid.Col span={{ base: 12, md: 5 }}>
                <Stack gap="sm">
                  {freetext ? (
                    <Textarea label="Sample text" autosize minRows={4} maxRows={12} value={sample} onChange={(e) => setSample(e.currentTarget.value)} />
                  ) : (
                    <Input.Wrapper label="Sample payload" labelElement="div" description="JSON, as a submitter would send it">
                      <CodeEditor label="Sample payload" language="json" text={sample} onText={setSample} minHeight={160} />
                    </Input.Wrapper>
                  )}
                  {parseError && (
                    <Alert color="red" role="alert">
                      {parseError}
                    </Alert>
                  )}
                  <Group>
                    <Button onClick={run} loading={test.isPending}>
                      Test
                    </Button>
                  </Group>
                  <Failure error={test.error} />
                </Stack>
              </Grid.Col>
              <Grid.Col span={{ base: 12, md: 7 }}>
                <Stack gap="sm" component="section" aria-label="Test result" aria-live="polite" aria-busy={test.isPending}>
                  {test.isPending ? (
                    <Text size="sm" c="dimmed">
                      Testing…
                    </Text>
                  ) : test.data ? (
                    <Outcome result={test.data} />
                  ) : (
                    <Text size="sm" c="dimmed">
                      No test yet: the verdict, each layer and each step appear here.
                    </Text>
                  )}
                </Stack>
              </Grid.Col>
            </Grid>
          </>
        )}
      </Stack>
    </Paper>
  );
}

function Outcome({ result }: { result: TestResult }) {
  const layerOf = (step: TestResult['steps'][number]) => (step.ruleId !== undefined ? 'business_rules' : 'schema');
  return (
    <>
      <Group gap="xs">
        <Badge size="lg" color={result.valid ? 'green' : 'red'}>
          {result.valid ? 'Valid' : 'Invalid'}
        </Badge>
        <Text size="sm" c="dimmed">
          in {result.durationMs.toFixed(1)} ms
        </Text>
        {result.failedLayer && <Text size="sm">Failed layer: {LAYER_WORDS[result.failedLayer]}</Text>}
      </Group>
      <Table aria-label="Layers" withTableBorder>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Layer</Table.Th>
            <Table.Th w={84}>Result</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(['schema', 'business_rules'] as const).map((layer) => (
            <Table.Tr key={layer}>
              <Table.Td>{LAYER_WORDS[layer]}</Table.Td>
              <Table.Td>
                <Badge variant="light" color={STATUS_COLOURS[result.layers[layer]]}>
                  {result.layers[layer]}
                </Badge>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Table aria-label="Steps" withTableBorder>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Step</Table.Th>
            <Table.Th>Layer</Table.Th>
            <Table.Th w={84}>Result</Table.Th>
            <Table.Th>Errors</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {result.steps.map((step, i) => (
            <Table.Tr key={i}>
              <Table.Td>
                <Text size="sm">{step.name}</Text>
                {step.expression && (
                  <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-word' }}>
                    {step.expression}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{LAYER_WORDS[layerOf(step)]}</Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }}>
                <Badge variant="light" color={STATUS_COLOURS[step.status]} style={{ overflow: 'visible' }}>
                  {step.status}
                </Badge>
              </Table.Td>
              <Table.Td>
                {step.errors.length === 0 ? (
                  <Text size="sm" c="dimmed">
                    none
                  </Text>
                ) : (
                  <Stack gap={2}>
                    {step.errors.map((e, j) => (
                      <Text key={j} size="sm" c="red.8" style={{ wordBreak: 'break-word' }}>
                        <Text span ff="monospace" size="sm">
                          {e.field}
                        </Text>{' '}
                        ({e.code}): {e.message}
                      </Text>
                    ))}
                  </Stack>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </>
  );
}
