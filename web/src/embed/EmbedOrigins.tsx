import { Button, Group, Paper, Stack, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must } from '../api';
import { useSession } from '../session';
import { Failure } from '../pages/controls';

/**
 * The Team page's "Embedded designer" (docs/embedding.md): the origins whose pages may frame the
 * designer (`GET`/`PUT /api/teams/:id/embed-origins`), one a line. Members read the list; owners and
 * admins change it (the API refuses others anyway, and checks every line).
 */
export function EmbedOrigins() {
  const { team } = useSession();
  const canEdit = team?.role === 'owner' || team?.role === 'admin';
  const queries = useQueryClient();
  const key = ['embed-origins', team?.id];
  const origins = useQuery({ queryKey: key, queryFn: () => must(api.GET('/api/teams/{id}/embed-origins', { params: { path: { id: team!.id } } })), enabled: !!team });
  const [text, setText] = useState<string>();
  const save = useMutation({
    mutationFn: (list: string[]) => must(api.PUT('/api/teams/{id}/embed-origins', { params: { path: { id: team!.id } }, body: { origins: list } })),
    onSuccess: async (saved) => {
      queries.setQueryData(key, saved);
      setText(undefined);
    },
  });
  const stored = origins.data?.origins.join('\n') ?? '';
  const shown = text ?? stored;
  return (
    <Paper withBorder p="md" component="section" aria-label="Embedded designer">
      <Stack gap="xs">
        <Title order={3} size="h4">
          Embedded designer
        </Title>
        <Text size="sm" c="dimmed">
          Pages of these sites may show a template&apos;s designer in a frame, opened with an embed token your server mints (docs/embedding.md).
        </Text>
        <Failure error={origins.error} />
        {canEdit ? (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              save.mutate(
                shown
                  .split('\n')
                  .map((line) => line.trim())
                  .filter(Boolean),
              );
            }}
          >
            <Stack gap="xs">
              <Textarea
                label="Sites that may embed the designer"
                description="One origin a line, such as https://app.example.com: no path, no wildcard"
                autosize
                minRows={2}
                maw={560}
                value={shown}
                onChange={(e) => {
                  const value = e.currentTarget.value;
                  setText(value);
                }}
              />
              <Group>
                <Button type="submit" variant="default" loading={save.isPending} disabled={text === undefined || text === stored}>
                  Save the sites
                </Button>
                {save.isSuccess && text === undefined && (
                  <Text role="status" size="sm" c="green">
                    Sites saved
                  </Text>
                )}
              </Group>
            </Stack>
          </form>
        ) : (
          <Text size="sm">{origins.data?.origins.length ? origins.data.origins.join(', ') : 'No site may embed the designer.'}</Text>
        )}
        <Failure error={save.error} />
      </Stack>
    </Paper>
  );
}
