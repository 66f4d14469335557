import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTemporalCli } from '../../scripts/temporal-cli';
import { searchAttributeArgs } from '../../domain/search-attributes';

/** One real Temporal dev server for the whole run; test files connect to it by address. */
export default async function globalSetup(): Promise<void> {
  const path = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  if (!path) throw new Error('Temporal CLI not found: run scripts/install-tools.sh or set TEMPORAL_CLI_PATH');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      extraArgs: [...searchAttributeArgs(), '--headless', '--log-level', 'error'],
    },
  });
  (globalThis as Record<string, unknown>).__TEMPORAL_ENV__ = env;
  process.env.TEST_TEMPORAL_ADDRESS = env.address;
}
