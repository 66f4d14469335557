import { proxyActivities, workflowInfo, type ActivityInterfaceFor, type ActivityOptions } from '@temporalio/workflow';
import { queuesOfMain } from '../../domain/temporal-names';

/**
 * Activities that wait on someone else's server (a webhook receiver, an SMTP server, a chat or file
 * share, a custom render API) run on the egress task queue, whose slots are sized to sockets
 * (EGRESS_ACTIVITY_SLOTS; docs/architecture.md "Task queues"): a receiver that hangs holds an egress
 * slot, never a bookkeeping one, and the project's fairness key (inherited from the workflow) keeps one
 * tenant's backlog from queueing another's e-mails.
 *
 * Like `proxyActivities`, and usable at module scope: the queue is found when an activity is called,
 * from the calling workflow's own (main) queue. A task queue is not part of what replay compares, so
 * runs recorded before the move replay unchanged and schedule their next calls here.
 */
export function proxyEgressActivities<A extends object>(options: Omit<ActivityOptions, 'taskQueue'>): ActivityInterfaceFor<A> {
  return new Proxy({} as ActivityInterfaceFor<A>, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      return (...args: unknown[]) => {
        const proxies = proxyActivities<Record<string, (...a: unknown[]) => Promise<unknown>>>({ ...options, taskQueue: queuesOfMain(workflowInfo().taskQueue).egress });
        return proxies[name](...args);
      };
    },
  });
}
