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
  history: temporal.api.history.v1.IHistory;
}

/** The patch ids whose markers the history records (the SDK's `patch-data` marker details). */
function patchesOf(history: temporal.api.history.v1.IHistory): Set<string> {
  const ids = new Set<string>();
  for (const e of history.events ?? []) {
    for (const p of e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []) ids.add((JSON.parse(Buffer.from(p.data!).toString('utf8')) as { id: string }).id);
  }
  return ids;
}

/** The activity types the history scheduled, and `child:<type>` for the children it started. */
function stepsOf(history: temporal.api.history.v1.IHistory): Set<string> {
  const steps = new Set<string>();
  for (const e of history.events ?? []) {
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) steps.add(activity);
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name;
    if (child) steps.add(`child:${child}`);
    if (e.workflowExecutionCompletedEventAttributes || e.workflowExecutionContinuedAsNewEventAttributes) steps.add('ended');
  }
  return steps;
}

/**
 * Every live `patched()` id in workflows/, the workflow type that calls it, and what a history of its
 * old branch shows: recorded by code from before the patch, so it has no marker of it and took the
 * path the patch replaced. A new patch missing here fails the coverage test until both of its
 * branches are recorded (docs/architecture.md "Changing workflow code").
 */
const LIVE_PATCHES: Record<string, { type: string; oldBranch: (steps: Set<string>) => boolean }> = {
  'document-event-first-attempt-inline': { type: 'generateDocumentWorkflow', oldBranch: (s) => s.has('child:deliverWebhookWorkflow') && !s.has('attemptDelivery') },
  'batch-keyset-cursor': { type: 'generateBatchWorkflow', oldBranch: (s) => s.has('listBatchJobIds') },
  'batch-render-groups': { type: 'generateBatchWorkflow', oldBranch: (s) => s.has('renderJob') },
  'batch-group-deliveries': { type: 'generateBatchWorkflow', oldBranch: (s) => s.has('renderJobs') && s.has('attemptDelivery') },
  // Every batch's last run calls it before completeBatch: one that completed without the marker took the old branch.
  'batch-archive': { type: 'generateBatchWorkflow', oldBranch: (s) => s.has('completeBatch') },
  'review-digest-signal': { type: 'flowRunWorkflow', oldBranch: (s) => s.has('child:flowReviewDigestWorkflow') },
  // The maintenance run calls each of its patches on every run: a whole run without the marker took the old branch.
  'report-retention': { type: 'documentMaintenanceWorkflow', oldBranch: (s) => s.has('ended') },
  'report-schedule-reconcile': { type: 'documentMaintenanceWorkflow', oldBranch: (s) => s.has('ended') },
  'report-agent-tasks': { type: 'documentMaintenanceWorkflow', oldBranch: (s) => s.has('ended') },
  'idempotency-keys': { type: 'documentMaintenanceWorkflow', oldBranch: (s) => s.has('ended') },
};

/** The patch ids `patched()` is called with in workflows/ (string constants named …PATCH, or literals). */
function livePatchIds(): string[] {
  const ids = new Set<string>();
  const walk = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, d.name);
      if (d.isDirectory()) walk(path);
      else if (d.name.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const m of text.matchAll(/PATCH = '([^']+)'/g)) ids.add(m[1]);
        for (const m of text.matchAll(/patched\('([^']+)'\)/g)) ids.add(m[1]);
      }
    }
  };
  walk(join(__dirname, '../../../workflows'));
  return [...ids].sort();
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

  it('has both branches of every live patch recorded', () => {
    expect(livePatchIds()).toEqual(Object.keys(LIVE_PATCHES).sort());
    const missing: string[] = [];
    for (const [id, { type, oldBranch }] of Object.entries(LIVE_PATCHES)) {
      const ofType = all.filter((f) => f.workflowType === type);
      if (!ofType.some((f) => patchesOf(f.history).has(id))) missing.push(`${id}: no history of ${type} with its marker (new branch)`);
      if (!ofType.some((f) => !patchesOf(f.history).has(id) && oldBranch(stepsOf(f.history)))) missing.push(`${id}: no history of ${type} from before it (old branch)`);
    }
    expect(missing).toEqual([]);
  });

  it('fails when any workflow type changes its steps without a patch', async () => {
    // Every workflow of this bundle sleeps before it begins, unpatched: each type's histories must refuse it.
    const changed = await bundleWorkflowCode({ workflowsPath: require.resolve('../../support/changed-workflows'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } });
    const results = await replay({ workflowBundle: changed }, all);
    const caught = new Map<string, number>();
    for (const r of results) if (r.error?.name === 'DeterminismViolationError') caught.set(r.file.split('/')[0], (caught.get(r.file.split('/')[0]) ?? 0) + 1);
    const missed = results.filter((r) => r.error?.name !== 'DeterminismViolationError').map((r) => `${r.file}: ${r.error?.name ?? 'replayed'}`);
    expect(missed).toEqual([]);
    expect([...caught.keys()].sort()).toEqual(Object.keys(workflows).sort());
  }, REPLAY_TIMEOUT_MS);
});
