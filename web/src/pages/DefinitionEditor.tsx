import { Alert, Button, Code, Group, JsonInput, List, Paper, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorText } from '../api';

/** A JSON value as the client types the definition's fields. */
type Json = string | number | boolean | unknown[] | { [key: string]: unknown } | null;

interface Definition {
  schema: Json;
  variables?: Json;
  constants?: Json;
  calculatedVariables?: Json;
}

interface Problem {
  path: string;
  message: string;
}

/**
 * The template's definition as JSON, the code view: members edit and save the draft (PUT, validated
 * as a whole by the API: every problem listed with its path); the preview follows the saved draft.
 * A viewer reads it.
 */
export function DefinitionEditor({ id, definition, canEdit }: { id: string; definition: Record<string, unknown>; canEdit: boolean }) {
  const queries = useQueryClient();
  const original = JSON.stringify(definition, null, 2);
  const [text, setText] = useState(original);
  const [problems, setProblems] = useState<{ message: string; list: Problem[] }>();
  const save = useMutation({
    mutationFn: async (parsed: Definition) => {
      const { error } = await api.PUT('/api/templates/{id}', {
        params: { path: { id } },
        body: { schema: parsed.schema, variables: parsed.variables, constants: parsed.constants, calculatedVariables: parsed.calculatedVariables },
      });
      if (error !== undefined) {
        const related = (error as { relatedInfo?: { errors?: Problem[] } }).relatedInfo;
        setProblems({ message: errorText(error), list: related?.errors ?? [] });
        throw new Error(errorText(error));
      }
    },
    onSuccess: async () => {
      setProblems(undefined);
      await queries.invalidateQueries({ queryKey: ['template', id] });
    },
  });
  let parsed: Definition | undefined;
  let invalid: string | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value) && 'schema' in value) parsed = value as Definition;
    else invalid = 'The definition is a JSON object with at least "schema"';
  } catch {
    invalid = 'Not valid JSON';
  }
  return (
    <Paper withBorder p="md" component="section" aria-label="Definition">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Definition
          </Title>
          {canEdit && (
            <Button onClick={() => parsed && save.mutate(parsed)} loading={save.isPending} disabled={!parsed || text === original}>
              Save draft
            </Button>
          )}
        </Group>
        {problems && (
          <Alert color="red" role="alert" title="The draft was not saved">
            <Text size="sm">{problems.message}</Text>
            {problems.list.length > 1 && (
              <List size="sm" mt="xs">
                {problems.list.slice(0, 20).map((p) => (
                  <List.Item key={`${p.path}:${p.message}`}>
                    <Code>{p.path}</Code> {p.message}
                  </List.Item>
                ))}
              </List>
            )}
          </Alert>
        )}
        <JsonInput label="Definition (JSON)" value={text} onChange={setText} readOnly={!canEdit} autosize minRows={10} maxRows={30} error={invalid} />
      </Stack>
    </Paper>
  );
}
