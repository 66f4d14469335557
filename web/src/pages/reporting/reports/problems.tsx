import { Alert, List } from '@mantine/core';
import { errorText } from '../../../api';

/** An API refusal with the problems it lists (`relatedInfo.errors: [{path, message}]`), each shown where it is. */
class ApiProblem extends Error {
  constructor(
    message: string,
    readonly problems: Array<{ path: string; message: string }>,
  ) {
    super(message);
  }
}

/** The data of a typed call, or an ApiProblem with the API's message and listed problems. */
export async function call<T>(request: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const { data, error } = await request;
  if (error !== undefined || data === undefined) {
    const related = (error as { relatedInfo?: { errors?: unknown } } | undefined)?.relatedInfo?.errors;
    const problems = Array.isArray(related) ? related.filter((p): p is { path: string; message: string } => typeof p?.message === 'string').map((p) => ({ path: String(p.path ?? ''), message: p.message })) : [];
    throw new ApiProblem(errorText(error), problems);
  }
  return data;
}

/** An error as an alert, with the problems it lists. */
export function ProblemAlert({ error, title }: { error: Error | null | undefined; title?: string }) {
  if (!error) return null;
  const problems = error instanceof ApiProblem ? error.problems : [];
  return (
    <Alert color="red" role="alert" title={title}>
      {error.message}
      {problems.length > 0 && (
        <List size="sm" mt="xs">
          {problems.map((p, i) => (
            <List.Item key={i}>
              {p.path ? <strong>{p.path}: </strong> : null}
              {p.message}
            </List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}
