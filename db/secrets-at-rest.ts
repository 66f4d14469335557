import { mapHeaderValues, SEALED_PREFIX, seal, unseal, type Keyring } from '../domain/secret-box';
import { mapChannelConfigHeaders, mapChannelSecrets, mapDatasourceConfigHeaders, mapDatasourceSecrets, mapOutputPasswords, mapRenderConfigSecret } from './secret-columns';
import { modifyReturning, type Queryable } from './sql';

/**
 * Every stored secret (docs/security.md, "Credentials: secrets at rest"), and the one routine that
 * (re-)encrypts them: at start-up for rows written before encryption existed (`plaintext`), and
 * by `npm run admin -- rotate-encryption-key` for everything not under the current key (`rotate`).
 */

type Kind = 'text' | 'headers' | 'renderConfig' | 'channels' | 'namedSecrets' | 'configHeaders' | 'datasourceConfig' | 'outputPasswords';

interface SecretColumn {
  table: string;
  column: string;
  kind: Kind;
}

export const SECRET_COLUMNS: readonly SecretColumn[] = [
  { table: 'users', column: 'two_factor_secret', kind: 'text' },
  { table: 'webhook_subscriptions', column: 'secret', kind: 'text' },
  { table: 'webhook_deliveries', column: 'secret', kind: 'text' },
  { table: 'webhook_deliveries', column: 'headers', kind: 'headers' },
  { table: 'flow_gates', column: 'render_config', kind: 'renderConfig' },
  { table: 'flow_gates', column: 'delivery_channels', kind: 'channels' },
  { table: 'reporting_datasources', column: 'secrets', kind: 'namedSecrets' },
  // http_json `defaultHeaders` values (docs/security.md "Reporting datasources: secrets tied to their target").
  { table: 'reporting_datasources', column: 'config', kind: 'datasourceConfig' },
  { table: 'reporting_channels', column: 'secrets', kind: 'namedSecrets' },
  // A webhook channel's header values (config.headers.*); rows from before they were secrets hold plaintext.
  { table: 'reporting_channels', column: 'config', kind: 'configHeaders' },
  // Stored answers of Idempotency-Keys (docs/idempotency.md): a created API key or webhook secret is in them.
  { table: 'idempotency_keys', column: 'response', kind: 'text' },
  // A generation's encryption passwords (output.encryption), used when the job renders.
  { table: 'document_jobs', column: 'output', kind: 'outputPasswords' },
  { table: 'document_batches', column: 'output', kind: 'outputPasswords' },
  // A project's signing certificate (docs/documents.md "Signatures"): the PKCS#12 file (base64) and its password.
  { table: 'signing_certificates', column: 'p12', kind: 'text' },
  { table: 'signing_certificates', column: 'password', kind: 'text' },
];

/** A string value not starting with the prefix ($p): something to (re-)encrypt. */
const STALE = '@.type() == "string" && !(@ starts with $p)';

/** SQL condition "this row holds a secret that does not start with $1", so unchanged rows are never read. */
function staleCondition({ column: c, kind }: SecretColumn): string {
  const path = (p: string) => `jsonb_path_exists(${c}, '${p} ? (${STALE})', jsonb_build_object('p', $1::text))`;
  switch (kind) {
    case 'text':
      return `${c} IS NOT NULL AND NOT starts_with(${c}, $1::text)`;
    case 'headers':
      return `${c} IS NOT NULL AND ${path('$.*')}`;
    case 'renderConfig':
      return `${c} IS NOT NULL AND ${path('$.secret')}`;
    case 'channels':
      return `(${path('$[*].secret')} OR ${path('$[*].headers.*')})`;
    case 'namedSecrets':
      return path('$.*.value');
    case 'configHeaders':
      return path('$.headers.*');
    case 'datasourceConfig':
      return path('$.defaultHeaders.*');
    case 'outputPasswords':
      return `${c} IS NOT NULL AND (${path('$.encryption.ownerPassword')} OR ${path('$.encryption.userPassword ? (@ != "")')})`;
  }
}

function transform(kind: Kind, value: unknown, f: (s: string) => string): unknown {
  switch (kind) {
    case 'text':
      return f(value as string);
    case 'headers':
      return mapHeaderValues(value as Record<string, string>, f);
    case 'renderConfig':
      return mapRenderConfigSecret(value as Record<string, unknown>, f);
    case 'channels':
      return mapChannelSecrets(value as never, f);
    case 'namedSecrets':
      return mapDatasourceSecrets(value as never, f);
    case 'configHeaders':
      return mapChannelConfigHeaders(value as Record<string, unknown>, f);
    case 'datasourceConfig':
      return mapDatasourceConfigHeaders(value as Record<string, unknown>, f);
    case 'outputPasswords':
      return mapOutputPasswords(value as never, f);
  }
}

const BATCH = 200;

/**
 * Encrypts under the keyring's current key every stored secret that is plaintext (`plaintext`)
 * or not under the current key (`rotate`; needs the old keys in ENCRYPTION_KEY_PREVIOUS).
 * Idempotent and safe beside a running service: each row is rewritten only if it still holds
 * the value that was read (compare-and-set), so a secret changed meanwhile is left as written.
 * Returns how many rows changed per `table.column`.
 */
export async function reencryptStoredSecrets(db: Queryable, keyring: Keyring, scope: 'plaintext' | 'rotate'): Promise<Record<string, number>> {
  const prefix = scope === 'plaintext' ? SEALED_PREFIX : `${SEALED_PREFIX}${keyring.current.id}:`;
  const reseal = (s: string) => (s.startsWith(prefix) ? s : seal(keyring, unseal(keyring, s)));
  const counts: Record<string, number> = {};
  for (const col of SECRET_COLUMNS) {
    const { table, column, kind } = col;
    const json = kind !== 'text';
    let changed = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows: Array<{ id: string; value: unknown }> = await db.query(
        `SELECT id, ${column} AS value FROM ${table} WHERE id > $2 AND ${staleCondition(col)} ORDER BY id LIMIT ${BATCH}`,
        [prefix, after],
      );
      for (const row of rows) {
        const next = transform(kind, row.value, reseal);
        const updated = await modifyReturning(
          db,
          json
            ? `UPDATE ${table} SET ${column} = $2::jsonb WHERE id = $1 AND ${column} = $3::jsonb RETURNING id`
            : `UPDATE ${table} SET ${column} = $2 WHERE id = $1 AND ${column} = $3 RETURNING id`,
          [row.id, json ? JSON.stringify(next) : next, json ? JSON.stringify(row.value) : row.value],
        );
        changed += updated.length;
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1].id;
    }
    counts[`${table}.${column}`] = changed;
  }
  return counts;
}
