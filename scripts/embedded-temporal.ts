import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/shared/search-attributes';
import { findTemporalCli } from './temporal-cli';

/**
 * `npm start` without TEMPORAL_ADDRESS: the Temporal CLI dev server with its Web UI, history
 * persisted in DATA_DIR/temporal.db (SQLite). The CLI is TEMPORAL_CLI_PATH, else the one
 * scripts/install-tools.sh caches (built on first use when Go is available), else `temporal` on
 * PATH, else the SDK downloads one.
 */
export async function startEmbeddedTemporal(opts: { dataDir: string; cliPath?: string; port: number; uiPort: number; namespace: string; inMemory?: boolean }) {
  let path = findTemporalCli(opts.cliPath);
  if (!path && hasGo()) {
    process.stdout.write('Temporal CLI not found: building it once with scripts/install-tools.sh (takes a few minutes)…\n');
    const r = spawnSync('bash', [join(__dirname, '..', '..', 'scripts', 'install-tools.sh'), 'temporal'], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('could not build the Temporal CLI; set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS');
    path = findTemporalCli(opts.cliPath);
  }
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: path ? { type: 'existing-path', path } : { type: 'cached-download' },
      // In memory (a benchmark's scratch server): nothing kept, and no fsync per write.
      ...(opts.inMemory ? {} : { dbFilename: join(opts.dataDir, 'temporal.db') }),
      namespace: opts.namespace,
      ip: '127.0.0.1',
      port: opts.port,
      ui: true,
      uiPort: opts.uiPort,
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      log: { format: 'pretty', level: 'warn' },
      extraArgs: DEV_SERVER_ARGS,
    },
  });
  return { address: env.address, uiUrl: `http://127.0.0.1:${opts.uiPort}`, stop: () => env.teardown() };
}

/**
 * `matching.enableFairness`: task queues dispatch by the tasks' fairness keys (the project,
 * platform/start-workflow.ts) and priority keys, so one project's backlog on the egress or render
 * queue never stands in front of another's (docs/architecture.md "Task queues"). Compose sets the same.
 *
 * The dev server runs Temporal Schedules on an internal per-namespace worker with two task pollers;
 * 100 schedules firing in the same minute then start their workflows up to a minute late (npm run
 * bench:schedule). More pollers let it keep up.
 */
export const DEV_SERVER_ARGS = [
  '--dynamic-config-value',
  'worker.perNamespaceWorkerOptions={"MaxConcurrentWorkflowTaskPollers":16,"MaxConcurrentActivityTaskPollers":16}',
  '--dynamic-config-value',
  'matching.enableFairness=true',
];

function hasGo(): boolean {
  return spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
}
