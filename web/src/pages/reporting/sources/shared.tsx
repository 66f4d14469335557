import { Alert, List } from '@mantine/core';
import type { components } from '@formwork/client';
import { errorText, type ApiError } from '../../../api';

export type Datasource = components['schemas']['Datasource'];
export type DatasourceTest = components['schemas']['DatasourceTest'];
export type DiscoveredSchema = components['schemas']['DiscoveredSchema'];
export type Query = components['schemas']['Query'];
export type QueryVersion = components['schemas']['QueryVersion'];
export type Agent = components['schemas']['Agent'];
export type ParameterDef = Query['parameters'][number];

/** One problem the API named, where it is (`text`, `parameters[0].name`, `config.port`). */
export interface Problem {
  path: string;
  message: string;
  code?: string;
}

/**
 * An API refusal with the problems it lists (400 ERR_DS_002 / ERR_QRY_002 `relatedInfo.errors`), so a
 * page can show each where it belongs; its message is the API's, with the code.
 */
export class ApiRefusal extends Error {
  readonly problems: Problem[];
  readonly code: string | undefined;
  /** The input a refusal names (`relatedInfo.field`: a parameter's name for ERR_RPT_007). */
  readonly field: string | undefined;
  constructor(body: unknown) {
    super(errorText(body));
    const error = body as Partial<ApiError> | undefined;
    this.code = error?.code;
    this.field = typeof error?.relatedInfo?.field === 'string' ? error.relatedInfo.field : undefined;
    const listed = error?.relatedInfo?.errors;
    this.problems = Array.isArray(listed)
      ? listed.filter((p): p is Problem => !!p && typeof (p as Problem).path === 'string' && typeof (p as Problem).message === 'string')
      : [];
  }
}

/** The data of a typed call, or a thrown ApiRefusal carrying the API's problems. */
export async function call<T>(request: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const { data, error } = await request;
  if (error !== undefined || data === undefined) throw new ApiRefusal(error);
  return data;
}

/** The problems of an error at `path` or under it (`parameters[0]` takes `parameters[0].name`). */
export function problemsAt(error: unknown, path: string): Problem[] {
  if (!(error instanceof ApiRefusal)) return [];
  return error.problems.filter((p) => p.path === path || p.path.startsWith(`${path}.`) || p.path.startsWith(`${path}[`));
}

/** The error's message as an alert, with the problems no field of the page shows (`shown` are the paths the page places itself). */
export function ErrorAlert({ error, shown = [] }: { error: unknown; shown?: string[] }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : errorText(error);
  const rest = error instanceof ApiRefusal ? error.problems.filter((p) => !shown.some((s) => p.path === s || p.path.startsWith(`${s}.`) || p.path.startsWith(`${s}[`))) : [];
  return (
    <Alert color="red" role="alert" title={message}>
      {rest.length > 0 && (
        <List size="sm">
          {rest.map((p) => (
            <List.Item key={`${p.path}:${p.message}`}>
              {p.path}: {p.message}
            </List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}

export const KIND_NAMES: Record<Datasource['kind'], string> = {
  postgres: 'PostgreSQL',
  mysql: 'MySQL / MariaDB',
  sqlite: 'SQLite (through an agent)',
  http_json: 'HTTP API (JSON)',
  csv: 'CSV file at a URL',
};
