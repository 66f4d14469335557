import { defineStateMachine } from '../state-machine';
import type { ReportDeliveryStatus } from './delivery';

/** `reporting_deliveries.status` (docs/reporting.md "Deliveries"). Moved only by db/reporting/delivery-state.ts. */
const REPORT_DELIVERY_STATUSES = ['pending', 'delivering', 'completed', 'failed', 'skipped'] as const satisfies readonly ReportDeliveryStatus[];

/**
 * One delivery to one channel target. Inserted `pending`, or `skipped` for a channel that is
 * inactive or gone (nothing is sent). An attempt marks it `delivering` (again, while retries are
 * scheduled) and records `completed` or `failed`; a target refused before sending, or a cancelled
 * delivery workflow, fails it straight from `pending`. A manual retry reopens `failed` or `skipped`
 * as `pending`. `failed` also lists the attempt's moves: an attempt activity that Temporal retries
 * after it recorded `failed` records its new attempt on that row. A completed delivery never moves.
 */
export const REPORT_DELIVERY_TRANSITIONS: Readonly<Record<ReportDeliveryStatus, readonly ReportDeliveryStatus[]>> = {
  pending: ['delivering', 'failed'],
  delivering: ['delivering', 'completed', 'failed'],
  completed: [],
  failed: ['pending', 'delivering', 'completed', 'failed'],
  skipped: ['pending'],
};

export const reportDeliveryMachine = defineStateMachine(REPORT_DELIVERY_STATUSES, ['pending', 'skipped'], REPORT_DELIVERY_TRANSITIONS);
