import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * Workflow histories for the replay test (docs/architecture.md "Changing workflow code";
 * tests/integration/workflows/replay.test.ts). With CAPTURE_HISTORIES=1 (`npm run histories:capture`),
 * every test app, when it closes, saves the closed workflows of its own task queue into
 * tests/fixtures/histories/<workflowType>/<branch>.binpb (the history's protobuf encoding, which the
 * replay decodes exactly; the JSON form would pass through a second protobuf copy): one file per distinct branch, a branch being
 * the sequence of commands and outcomes the workflow produced (activities scheduled and how they ended,
 * timers, children, signals, patch markers, continue-as-new), so the approval that was approved, the one
 * rejected and the one that timed out are three files, and a hundred identical document runs one.
 * Existing files are kept: a fixture is a promise to runs already in flight, never rewritten.
 */
export const HISTORIES_DIR = join(__dirname, '..', 'fixtures', 'histories');
/** Branches kept per workflow type: enough for every path the tests take, not every test's copy. */
const MAX_PER_TYPE = 40;

type Event = temporal.api.history.v1.IHistoryEvent;

/** The event's part of a branch: what the workflow decided and how it ended, without ids or times. */
function step(e: Event): string | null {
  const type = String(e.eventType ?? '');
  if (e.activityTaskScheduledEventAttributes) return `activity:${e.activityTaskScheduledEventAttributes.activityType?.name}`;
  if (e.activityTaskCompletedEventAttributes) return 'activity-completed';
  if (e.activityTaskFailedEventAttributes) return 'activity-failed';
  if (e.activityTaskTimedOutEventAttributes) return 'activity-timed-out';
  if (e.activityTaskCanceledEventAttributes) return 'activity-cancelled';
  if (e.timerStartedEventAttributes) return 'timer';
  if (e.timerFiredEventAttributes) return 'timer-fired';
  if (e.timerCanceledEventAttributes) return 'timer-cancelled';
  if (e.startChildWorkflowExecutionInitiatedEventAttributes) return `child:${e.startChildWorkflowExecutionInitiatedEventAttributes.workflowType?.name}`;
  if (e.childWorkflowExecutionCompletedEventAttributes) return 'child-completed';
  if (e.childWorkflowExecutionFailedEventAttributes) return 'child-failed';
  if (e.workflowExecutionSignaledEventAttributes) return `signal:${e.workflowExecutionSignaledEventAttributes.signalName}`;
  if (e.markerRecordedEventAttributes) return `marker:${e.markerRecordedEventAttributes.markerName}`;
  if (e.workflowExecutionUpdateAcceptedEventAttributes) return 'update';
  if (e.workflowExecutionCancelRequestedEventAttributes) return 'cancel-requested';
  if (e.workflowExecutionContinuedAsNewEventAttributes) return 'continued-as-new';
  if (e.workflowExecutionCompletedEventAttributes) return 'completed';
  if (e.workflowExecutionFailedEventAttributes) return 'failed';
  if (e.workflowExecutionCanceledEventAttributes) return 'cancelled';
  return type.includes('SIGNAL_EXTERNAL') ? 'signal-external' : null;
}

export function branchOf(history: temporal.api.history.v1.IHistory): string {
  const steps = (history.events ?? []).map(step).filter((s): s is string => s !== null);
  return createHash('sha256').update(steps.join('\n')).digest('hex').slice(0, 12);
}

/** Saves the closed workflows of `taskQueue` whose branch has no fixture yet (CAPTURE_HISTORIES=1 only). */
export async function captureHistories(client: Client, taskQueue: string): Promise<void> {
  if (process.env.CAPTURE_HISTORIES !== '1') return;
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus != 'Running'` })) {
    const dir = join(HISTORIES_DIR, wf.type);
    await mkdir(dir, { recursive: true });
    if ((await readdir(dir)).length >= MAX_PER_TYPE) continue;
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const file = join(dir, `${branchOf(history)}.binpb`);
    if (!existsSync(file)) await writeFile(file, temporal.api.history.v1.History.encode(history).finish());
  }
}
