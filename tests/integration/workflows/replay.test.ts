import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import * as workflows from '../../../workflows';
import { HISTORIES_DIR } from '../../support/histories';

/**
 * Workflow versioning (docs/architecture.md "Changing workflow code"): every recorded history (one per
 * branch the integration tests took, captured by `npm run histories:capture` into
 * tests/fixtures/histories/) is replayed against the workflow code of this commit. A change of a
 * workflow's steps without `patched()` makes a recorded history non-deterministic and fails here, before
 * it reaches a deployment with runs in flight.
 */
interface Fixture {
  workflowType: string;
  file: string;
  history: unknown;
}

function fixtures(): Fixture[] {
  return readdirSync(HISTORIES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(join(HISTORIES_DIR, d.name))
        .filter((f) => f.endsWith('.binpb'))
        .map((f) => ({ workflowType: d.name, file: `${d.name}/${f}`, history: temporal.api.history.v1.History.decode(readFileSync(join(HISTORIES_DIR, d.name, f))) })),
    );
}

async function replay(options: Parameters<typeof Worker.runReplayHistories>[0], items: Fixture[]): Promise<Array<{ file: string; error?: ReplayResult['error'] }>> {
  const results: Array<{ file: string; error?: ReplayResult['error'] }> = [];
  const byId = new Map(items.map((f) => [f.file, f]));
  for await (const r of Worker.runReplayHistories(options, items.map((f) => ({ workflowId: f.file, history: f.history })))) {
    results.push({ file: byId.get(r.workflowId)?.file ?? r.workflowId, ...(r.error ? { error: r.error } : {}) });
  }
  return results;
}

/**
 * Replaying the 66 histories takes about 8 s alone; the fresh-clone CI once took more than 60 s for it while
 * the other Jest worker rendered (the file took 128 s), so these two tests get a wider bound than the default.
 */
const REPLAY_TIMEOUT_MS = 300_000;

describe('workflow histories replay against this code', () => {
  const all = fixtures();

  it('has recorded histories of every workflow type the worker registers', () => {
    const types = new Set(all.map((f) => f.workflowType));
    expect(Object.keys(workflows).filter((t) => !types.has(t))).toEqual([]);
  });

  it('replays every recorded branch without a determinism error', async () => {
    const results = await replay({ workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! } }, all);
    expect(results).toHaveLength(all.length);
    const failed = results.filter((r) => r.error).map((r) => `${r.file}: ${r.error!.message.split('\n')[0]}`);
    expect(failed).toEqual([]);
    // The figure the closing note quotes: branches per workflow type.
    const counts: Record<string, number> = {};
    for (const f of all) counts[f.workflowType] = (counts[f.workflowType] ?? 0) + 1;
    console.log(`replayed ${all.length} histories: ${JSON.stringify(counts)}`);
  }, REPLAY_TIMEOUT_MS);

  it('fails when a workflow changes its steps without a patch', async () => {
    const documents = all.filter((f) => f.workflowType === 'generateDocumentWorkflow');
    expect(documents.length).toBeGreaterThan(0);
    const changed = await bundleWorkflowCode({ workflowsPath: require.resolve('../../support/changed-workflows'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } });
    const results = await replay({ workflowBundle: changed }, documents);
    expect(results.map((r) => r.error?.name)).toEqual(documents.map(() => 'DeterminismViolationError'));
  }, REPLAY_TIMEOUT_MS);
});
