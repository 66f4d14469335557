import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { DEV_SERVER_ARGS } from '../../scripts/embedded-temporal';
import { findTemporalCli } from '../../scripts/temporal-cli';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/shared/search-attributes';
import { openDatabase } from '../../db/data-source';
import { adminQuery, databaseUrl, TEMPLATE_DATABASE_ENV } from './database';

/**
 * One real Temporal dev server for the whole run (test files connect by address), the workflow
 * bundle built once instead of once per test file, and one migrated database that every test
 * database copies (tests/support/database.ts).
 */
export default async function globalSetup(): Promise<void> {
  // What dist/ requires of the workspace packages is their own build (packages/*/dist): brought up to
  // date here, so `npx tsc -p tsconfig.json` before a test file stays enough (a no-op when nothing changed).
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'packages/wire', 'packages/query-runners'], { cwd: join(__dirname, '..', '..'), stdio: 'inherit' });
  const path = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  if (!path) throw new Error('Temporal CLI not found: run scripts/install-tools.sh or set TEMPORAL_CLI_PATH');
  // The dev server first, alone: the SDK gives it 5 s to listen, and once (session 19) it missed them while
  // the workflow bundling and the migrations kept both cores busy beside it.
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      log: { format: 'pretty', level: 'error' },
      extraArgs: DEV_SERVER_ARGS,
    },
  });
  const [bundle, template] = await Promise.all([bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietLogger }), migratedTemplate()]);
  const bundlePath = join(tmpdir(), `formwork-workflows-${process.pid}.js`);
  await writeFile(bundlePath, bundle.code);
  (globalThis as Record<string, unknown>).__TEMPORAL_ENV__ = env;
  process.env.TEST_TEMPORAL_ADDRESS = env.address;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env[TEMPLATE_DATABASE_ENV] = template;
}

/** A database with every migration applied, closed again: Postgres copies only a database nobody is connected to. */
async function migratedTemplate(): Promise<string> {
  const name = `formwork_template_${process.pid}`;
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE ${name}`);
  const db = await openDatabase(databaseUrl(name), 1);
  await db.destroy();
  return name;
}

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m), log: noop };
