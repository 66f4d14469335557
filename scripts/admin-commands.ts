import type { DataSource } from 'typeorm';
import { addCredits, creditBalance, freeDocumentsUsed } from '../db/documents/billing';
import { reencryptStoredSecrets } from '../db/secrets-at-rest';
import type { Keyring } from '../domain/secret-box';
import { FLOW_PLANS } from '../domain/flow/plans';

/**
 * Operator commands (`npm run admin -- <command> …`). Plain functions over the database so tests
 * run them directly; scripts/admin.ts parses the command line and prints.
 */
export const ADMIN_USAGE = [
  'usage: npm run admin -- <command> [options]',
  '  grant-credits --project <id|slug> --amount <n> [--reason <text>]   add document credits',
  '  set-plan      --project <id|slug> --plan <free|starter|growth|scale>',
  '  show          --project <id|slug>                                 plan, credits, free documents used',
  '  rotate-encryption-key                                             re-encrypt every stored secret with ENCRYPTION_KEY',
  '                (old keys in ENCRYPTION_KEY_PREVIOUS; docs/security.md)',
].join('\n');

export class AdminUsageError extends Error {}

export function parseArgs(argv: string[]): { command: string; options: Record<string, string> } {
  const [command, ...rest] = argv;
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i += 2) {
    if (!rest[i]?.startsWith('--') || rest[i + 1] === undefined) throw new AdminUsageError(`unexpected argument: ${rest[i]}`);
    options[rest[i].slice(2)] = rest[i + 1];
  }
  if (!command) throw new AdminUsageError('no command given');
  return { command, options };
}

async function findProject(db: DataSource, ref: string | undefined): Promise<{ id: string; name: string; slug: string; plan: string }> {
  if (!ref) throw new AdminUsageError('--project is required');
  const rows = await db.query(
    `SELECT id, name, slug, plan FROM projects WHERE deleted_at IS NULL AND (slug = $1 OR id::text = $1)`,
    [ref],
  );
  if (rows.length === 0) throw new AdminUsageError(`no project with id or slug ${ref}`);
  return rows[0];
}

export interface AdminContext {
  /** The configured keys of secrets at rest (platform/encryption-keys.ts, loadKeyring). */
  keyring?: Keyring;
}

export async function runAdminCommand(db: DataSource, argv: string[], context: AdminContext = {}): Promise<string> {
  const { command, options } = parseArgs(argv);
  if (command === 'rotate-encryption-key') {
    if (!context.keyring) throw new AdminUsageError('no encryption key loaded');
    const counts = await reencryptStoredSecrets(db, context.keyring, 'rotate');
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const detail = Object.entries(counts).map(([column, n]) => `${column} ${n}`).join(', ');
    return `re-encrypted ${total} rows with key ${context.keyring.current.id} (${detail}); ENCRYPTION_KEY_PREVIOUS can now be removed`;
  }
  const project = await findProject(db, options.project);
  switch (command) {
    case 'grant-credits': {
      const amount = Number(options.amount);
      if (!Number.isInteger(amount) || amount <= 0) throw new AdminUsageError('--amount must be a positive whole number');
      const balance = await addCredits(db, project.id, amount, options.reason ?? 'operator grant');
      return `granted ${amount} credits to ${project.slug}; balance ${balance}`;
    }
    case 'set-plan': {
      if (!(options.plan in FLOW_PLANS)) throw new AdminUsageError(`--plan must be one of ${Object.keys(FLOW_PLANS).join(', ')}`);
      await db.query(`UPDATE projects SET plan = $2, updated_at = now() WHERE id = $1`, [project.id, options.plan]);
      return `${project.slug} is now on the ${options.plan} plan`;
    }
    case 'show': {
      const [credits, used] = await Promise.all([creditBalance(db, project.id), freeDocumentsUsed(db, project.id)]);
      return `${project.name} (${project.slug}, ${project.id}): plan ${project.plan}, credits ${credits}, free documents used this month ${used}`;
    }
    default:
      throw new AdminUsageError(`unknown command: ${command}`);
  }
}
