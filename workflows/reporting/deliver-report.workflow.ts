import { proxyActivities, startChild, ParentClosePolicy, ChildWorkflowCancellationType } from '@temporalio/workflow';
import type { ReportDeliveryActivities } from '../../activities/reporting/deliver-report.activity';
import { workflowIds } from '../../domain/temporal-names';
import { deliveryLoop } from '../deliveries/delivery-loop';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../shared/search-attributes';

export interface DeliverReportInput {
  deliveryId: string;
  /** REPORT_DELIVERY_RETRY_DELAYS (30 s, 2 min, 10 min by default). */
  retryDelaysMs: number[];
}

const delivery = proxyActivities<ReportDeliveryActivities>({ startToCloseTimeout: '1 minute', retry: RETRY.delivery });
/** The attempt sends to the target (mail, chat, file share): an egress activity. */
const egress = proxyEgressActivities<ReportDeliveryActivities>({
  // An attempt has its own budget (5 minutes, a large upload included); the rest is bookkeeping.
  startToCloseTimeout: '10 minutes',
  // Only infrastructure failures reach this policy (target failures are outcomes).
  retry: RETRY.delivery,
});

/**
 * One report delivery (docs/reporting.md "Deliveries", "Temporal workflows"), id `report-delivery-<id>`
 * (`-retry-<n>` for a manual retry), through the one delivery loop (workflows/deliveries/delivery-loop.ts):
 * a retryable failure sleeps the next delay, a 429's Retry-After when longer.
 */
export async function deliverReportWorkflow(input: DeliverReportInput): Promise<'completed' | 'failed'> {
  return deliveryLoop({ name: 'report', attempt: egress.attemptReportDelivery, abandon: delivery.abandonReportDelivery }, input);
}

/**
 * Delivers a run's or job run's outputs from inside its workflow: the delivery records, one child
 * `deliverReportWorkflow` per target, all awaited, then the owner's final delivery status.
 */
export async function deliverOutputs(owner: { runId: string } | { jobRunId: string }, projectId: string, retryDelaysMs: number[]): Promise<'completed' | 'failed'> {
  const ids = await delivery.prepareReportDeliveries(owner);
  const children = await Promise.all(
    ids.map((deliveryId) =>
      startChild(deliverReportWorkflow, {
        workflowId: workflowIds.reportDelivery(deliveryId),
        args: [{ deliveryId, retryDelaysMs }],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        typedSearchAttributes: [
          { key: SA_KIND, value: 'report-delivery' },
          { key: SA_ENTITY_ID, value: deliveryId },
          { key: SA_PROJECT_ID, value: projectId },
        ],
      }),
    ),
  );
  await Promise.all(children.map((c) => c.result()));
  return delivery.finishReportDeliveries(owner);
}
