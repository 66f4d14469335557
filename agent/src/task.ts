import { AppError, openSealed } from '@formwork/wire';
import type { KeyObject } from 'node:crypto';

/** The kinds of task the service leases: every one, for each datasource kind the agent reaches. */
export type TaskKind = 'query' | 'test' | 'schema' | 'preview';
/** The datasource kinds the agent reaches (execute.ts); sent as `capabilities`, the service leases only their tasks. */
export const DATASOURCE_KINDS = ['postgres', 'mysql', 'sqlite'] as const;

export type TaskSecrets =
  | { mode: 'stored'; values?: Record<string, unknown> }
  | { mode: 'sealed'; sealed?: string }
  | { mode: 'agent_local' };

/** A task as the service leases it (docs/reporting.md "The agent protocol"). */
export interface LeasedTask {
  taskId: string;
  kind: TaskKind;
  attempt: number;
  leaseExpiresAt: string | null;
  datasource: {
    id: string;
    kind: string;
    config: Record<string, unknown>;
    pool?: { max?: number; idleTimeoutSeconds?: number };
    secrets: TaskSecrets;
  };
  statement?: { dialect?: string; sql: string; values?: unknown[] };
  limits?: { maxRows?: number; timeoutSeconds?: number; maxBytes?: number; onRowLimit?: 'fail' | 'truncate' };
}

const secretError = (message: string) => new AppError('ERR_DS_002', message, { field: 'secrets' });

/**
 * A datasource's secrets in clear, for the runner only (never logged, never sent back):
 * `stored` come with the task (the service decrypted them), `sealed` are opened with the agent's
 * private key under `<projectId>:datasource:<datasourceId>`, `agent_local` is the password in the
 * environment variable `config.secretEnv` of the agent's host.
 */
export function taskSecrets(task: LeasedTask, projectId: string, privateKey: KeyObject, env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const { secrets, config, id } = task.datasource;
  const strings = (values: unknown): Record<string, string | undefined> => {
    if (!values || typeof values !== 'object' || Array.isArray(values)) throw secretError('The datasource secrets are not an object');
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]));
  };
  switch (secrets?.mode) {
    case 'stored':
      return strings(secrets.values ?? {});
    case 'sealed': {
      if (typeof secrets.sealed !== 'string') throw secretError('The task carries no sealed secret');
      const plain = openSealed(privateKey, secrets.sealed, `${projectId}:datasource:${id}`);
      // The service seals the JSON of the secret values; a sealed bare password is read as the password.
      let values: unknown;
      try {
        values = JSON.parse(plain);
      } catch {
        values = undefined;
      }
      return values && typeof values === 'object' && !Array.isArray(values) ? strings(values) : { password: plain };
    }
    case 'agent_local': {
      const name = config.secretEnv;
      if (name === undefined || name === null || name === '') return {};
      if (typeof name !== 'string') throw secretError('config.secretEnv must name an environment variable');
      const value = env[name];
      if (value === undefined) throw secretError(`The environment variable ${name} is not set on the agent's host`);
      return { password: value };
    }
    default:
      throw secretError(`Unknown secret mode ${String((secrets as { mode?: unknown } | undefined)?.mode)}`);
  }
}
