import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openDatabase } from '../db/data-source';
import { loadConfig } from '../domain/config';
import { loadKeyring } from '../platform/encryption-keys';
import { ADMIN_USAGE, AdminUsageError, runAdminCommand } from './admin-commands';
import { EMBEDDED_DATABASE_URL_FILE } from './embedded-postgres';

/** `npm run admin -- …`: against DATABASE_URL, or the embedded database of a running `npm start`. */
async function main(): Promise<void> {
  const config = loadConfig();
  const url = config.database.url ?? (await readFile(join(config.dataDir, EMBEDDED_DATABASE_URL_FILE), 'utf8').catch(() => undefined))?.trim();
  if (!url) throw new AdminUsageError('set DATABASE_URL, or run `npm start` first (its embedded database is used)');
  const keyring = await loadKeyring(config);
  const db = await openDatabase(url, 1);
  try {
    process.stdout.write(`${await runAdminCommand(db, process.argv.slice(2), { keyring })}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof AdminUsageError ? `${err.message}\n${ADMIN_USAGE}` : err?.stack ?? err}\n`);
  process.exit(err instanceof AdminUsageError ? 2 : 1);
});
