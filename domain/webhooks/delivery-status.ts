import { defineStateMachine } from '../state-machine';
import type { DeliveryStatus } from './delivery';

/** `webhook_deliveries.status` (contract §5). Moved only by db/webhooks/delivery-attempts.ts. */
const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivering', 'completed', 'failed'] as const satisfies readonly DeliveryStatus[];

/**
 * One event to one target. Inserted `pending`; an attempt marks it `delivering` (and leaves it so
 * while a retry is scheduled) and records `completed` or `failed`. A refused target (subscription
 * inactive or deleted), a cancelled delivery workflow, or a manual retry whose workflow could not
 * start fails it from `pending`. A manual retry reopens `failed` as `pending`. `failed` also lists
 * `delivering` and itself: an attempt activity that Temporal retries after it recorded `failed`
 * marks and records again. A completed delivery never moves.
 */
export const WEBHOOK_DELIVERY_TRANSITIONS: Readonly<Record<DeliveryStatus, readonly DeliveryStatus[]>> = {
  pending: ['delivering', 'failed'],
  delivering: ['delivering', 'completed', 'failed'],
  completed: [],
  failed: ['pending', 'delivering', 'failed'],
};

export const webhookDeliveryMachine = defineStateMachine(WEBHOOK_DELIVERY_STATUSES, ['pending'], WEBHOOK_DELIVERY_TRANSITIONS);
