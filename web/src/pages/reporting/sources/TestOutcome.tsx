import { Alert, Text } from '@mantine/core';
import type { DatasourceTest } from './shared';

/** The outcome of "Test connection", in a region a screen reader hears when it changes. */
export function TestOutcome({ outcome, pending, error }: { outcome: DatasourceTest | { pending: string } | undefined; pending: boolean; error: Error | null }) {
  return (
    <section aria-label="Connection test" aria-live="polite">
      {pending && (
        <Text size="sm" c="dimmed">
          Connecting…
        </Text>
      )}
      {!pending && error && (
        <Alert color="red" role="alert" title="The test could not run">
          {error.message}
        </Alert>
      )}
      {!pending && outcome && 'pending' in outcome && (
        <Alert color="yellow" title="Waiting for the agent">
          The agent has not answered yet (task {outcome.pending}); its outcome will be the datasource&apos;s last test.
        </Alert>
      )}
      {!pending && outcome && 'ok' in outcome && outcome.ok && (
        <Alert color="green" title="Connected">
          {outcome.latencyMs !== null ? `In ${outcome.latencyMs} ms` : 'Connected'}
          {outcome.serverVersion ? `: ${outcome.serverVersion}` : ''}
          {outcome.executedBy === 'agent' ? ' (through the agent)' : ''}.
        </Alert>
      )}
      {!pending && outcome && 'ok' in outcome && !outcome.ok && (
        <Alert color="red" title="Could not connect">
          {outcome.error ? `${outcome.error.message} (${outcome.error.code})` : 'The connection failed.'}
        </Alert>
      )}
    </section>
  );
}
