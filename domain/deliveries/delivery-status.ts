import { defineStateMachine } from '../state-machine';
import type { ReportDeliveryStatus } from '../reporting/delivery';
import type { DeliveryStatus } from '../webhooks/delivery';

/**
 * The status of one delivery, `webhook_deliveries.status` (contract §5) and
 * `reporting_deliveries.status` (docs/reporting.md "Deliveries"): one table of moves for both,
 * moved only by db/deliveries/delivery-state.ts. `skipped` is a report delivery's only (a channel
 * inactive or gone when its run delivered).
 */
const DELIVERY_STATUSES = ['pending', 'delivering', 'completed', 'failed', 'skipped'] as const satisfies readonly (DeliveryStatus | ReportDeliveryStatus)[];
export type AnyDeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Inserted `pending` (or `skipped`). An attempt marks it `delivering` (and leaves it so while a retry
 * is scheduled) and records `completed` or `failed`. A refused target, a cancelled delivery workflow,
 * or a manual retry whose workflow could not start fails it from `pending`. A manual retry reopens
 * `failed` or `skipped` as `pending`. `failed` also lists the attempt's moves: an attempt activity
 * that Temporal retries after it recorded `failed` records its new attempt on that row (a success
 * too). A completed delivery never moves.
 */
export const DELIVERY_TRANSITIONS: Readonly<Record<AnyDeliveryStatus, readonly AnyDeliveryStatus[]>> = {
  pending: ['delivering', 'failed'],
  delivering: ['delivering', 'completed', 'failed'],
  completed: [],
  failed: ['pending', 'delivering', 'completed', 'failed'],
  skipped: ['pending'],
};

export const deliveryMachine = defineStateMachine(DELIVERY_STATUSES, ['pending', 'skipped'], DELIVERY_TRANSITIONS);
