import type { Client } from '@temporalio/client';
import { TypedSearchAttributes, type Workflow, type WorkflowIdReusePolicy } from '@temporalio/common';
import type * as registry from '../workflows';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../workflows/shared/search-attributes';

/*
 * Apart from platform/temporal.ts (connections, the SDK's logging) so that it loads no client or
 * worker code at run time: the launchers in platform/workflow-starts.ts run against a fake client
 * in unit tests.
 */

/** Every workflow the main worker registers, by name. Type only: nothing of workflows/ is loaded here. */
export type Workflows = typeof registry;
export type WorkflowName = keyof Workflows;

export interface WorkflowStart<N extends WorkflowName> {
  taskQueue: string;
  /** From domain/temporal-names.ts `workflowIds`, never built by hand. */
  workflowId: string;
  /**
   * The workflow function's own parameters, so a start that leaves out a required input field
   * (a render task queue, retry delays) does not compile.
   */
  args: Parameters<Workflows[N]>;
  /** Search attributes: what it is, which project, which product record. */
  kind: string;
  projectId?: string;
  entityId: string;
  memo?: Record<string, unknown>;
  /** REJECT_DUPLICATE makes a start idempotent even after the first run of that id has closed. */
  workflowIdReusePolicy?: WorkflowIdReusePolicy;
  /**
   * Signal-with-start: the signal goes to the run of that id if one is open, else a run is started
   * with it as its first event (a request that must reach the run already waiting, never a second run).
   */
  signal?: { name: string; args: unknown[] };
}

/**
 * The one way the service starts a workflow (platform/workflow-starts.ts holds the launchers that
 * call it): typed by the workflow's name, with the search attributes that make it findable in the
 * Web UI. Child workflows are started from workflow code with `startChild`, ids from the same helper.
 */
export async function startWorkflow<N extends WorkflowName>(client: Client, workflowType: N, start: WorkflowStart<N>): Promise<void> {
  const pairs = [
    { key: SA_KIND, value: start.kind },
    { key: SA_ENTITY_ID, value: start.entityId },
    ...(start.projectId ? [{ key: SA_PROJECT_ID, value: start.projectId }] : []),
  ];
  const options = {
    taskQueue: start.taskQueue,
    workflowId: start.workflowId,
    args: start.args as unknown[],
    typedSearchAttributes: new TypedSearchAttributes(pairs),
    memo: start.memo,
    // The project is the fairness key of the workflow's tasks and, inherited, of its activities' and
    // children's: one project's backlog on a queue never stands in front of another's (docs/architecture.md "Task queues").
    ...(start.projectId ? { priority: { fairnessKey: start.projectId } } : {}),
    ...(start.workflowIdReusePolicy ? { workflowIdReusePolicy: start.workflowIdReusePolicy } : {}),
  };
  if (start.signal) await client.workflow.signalWithStart<Workflow, unknown[]>(workflowType, { ...options, signal: start.signal.name, signalArgs: start.signal.args });
  else await client.workflow.start<Workflow>(workflowType, options);
}
