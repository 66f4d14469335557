import { Alert, Card, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../api';
import { useSession } from '../session';

/** This month's documents, as the analytics endpoint counts them. */
export function UsagePage() {
  const { team } = useSession();
  const start = new Date();
  start.setUTCDate(1);
  start.setUTCHours(0, 0, 0, 0);
  const usage = useQuery({
    queryKey: ['usage', team?.id, start.toISOString()],
    queryFn: () => must(api.GET('/api/documents/analytics', { params: { query: { startDate: start.toISOString() } } })),
    enabled: !!team,
  });
  const figures = Object.entries((usage.data ?? {}) as Record<string, unknown>).filter(([, v]) => typeof v === 'number') as Array<[string, number]>;
  return (
    <Stack>
      <Title order={2}>Usage this month</Title>
      {usage.error && <Alert color="red" role="alert">{usage.error.message}</Alert>}
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        {figures.map(([name, value]) => (
          <Card key={name} withBorder component="section" aria-label={name}>
            <Text size="sm" c="dimmed">
              {name.replace(/([A-Z])/g, ' $1').toLowerCase()}
            </Text>
            <Text size="xl" fw={700}>
              {Number.isInteger(value) ? value : value.toFixed(2)}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
    </Stack>
  );
}
