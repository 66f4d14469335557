import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { WebhookDeliveryEntity } from '../../db/webhooks/webhook-delivery.entity';
import { createDeliveries, envelope } from '../../db/webhooks/deliveries';
import { abandonDelivery } from '../../db/deliveries/delivery-state';
import { AppError, type ErrorCode } from '../../domain/errors';
import { workflowIds, type TaskQueues } from '../../domain/temporal-names';
import { TEST_EVENT_TYPE, type DeliverySource } from '../../domain/webhooks/delivery';
import { startWebhookDelivery } from '../../platform/workflow-starts';
import { retryDelivery } from '../deliveries/delivery-retry';
import type { ListDeliveriesQuery } from './webhooks.schema';
import { getSubscription } from './webhooks.service';
import { isUuid } from '../../domain/ids';

/**
 * Delivery records seen from the API: listing, the test event, and manual retry. Manual retry is
 * shared with Flow (`POST /api/flow/deliveries/:id/retry`), which passes its own error codes.
 */

export interface DeliveryDeps {
  db: DataSource;
  temporal: Client;
  taskQueues: TaskQueues;
  /** config.webhooks.retryDelaysMs */
  retryDelaysMs: number[];
}

/** Newest first; a subscription of another project (or deleted) is ERR_WEBHOOK_001. */
export async function listDeliveries(
  deps: Pick<DeliveryDeps, 'db'>,
  projectId: string,
  subscriptionId: string,
  query: ListDeliveriesQuery,
): Promise<{ deliveries: WebhookDeliveryEntity[]; total: number }> {
  await getSubscription(deps, projectId, subscriptionId);
  const qb = deps.db
    .getRepository(WebhookDeliveryEntity)
    .createQueryBuilder('d')
    .where('d.subscriptionId = :subscriptionId AND d.projectId = :projectId', { subscriptionId, projectId });
  if (query.status) qb.andWhere('d.status = :status', { status: query.status });
  const [deliveries, total] = await qb
    .orderBy('d.createdAt', 'DESC')
    .addOrderBy('d.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { deliveries, total };
}

/** Every delivery of a Flow run, oldest first (`GET /api/flow/runs/:id/deliveries`; contract §5 records). */
export async function listRunDeliveries(deps: Pick<DeliveryDeps, 'db'>, projectId: string, runId: string): Promise<WebhookDeliveryEntity[]> {
  return deps.db
    .getRepository(WebhookDeliveryEntity)
    .createQueryBuilder('d')
    .where(`d.runId = :runId AND d.projectId = :projectId AND d.source = 'flow'`, { runId, projectId })
    .orderBy('d.createdAt', 'ASC')
    .addOrderBy('d.url', 'ASC')
    .getMany();
}

/** A document delivery of the project whose subscription still exists. */
export async function getDocumentDelivery(deps: Pick<DeliveryDeps, 'db'>, projectId: string, deliveryId: string): Promise<WebhookDeliveryEntity> {
  const found = isUuid(deliveryId)
    ? await deps.db
        .getRepository(WebhookDeliveryEntity)
        .createQueryBuilder('d')
        .innerJoin('webhook_subscriptions', 's', 's.id = d.subscription_id AND s.deleted_at IS NULL')
        .where(`d.id = :deliveryId AND d.projectId = :projectId AND d.source = 'document'`, { deliveryId, projectId })
        .getOne()
    : null;
  if (!found) throw new AppError('ERR_WEBHOOK_002');
  return found;
}

/** Starts a delivery's workflow; the search attributes make it findable by project and delivery. */
async function startDeliveryWorkflow(deps: DeliveryDeps, projectId: string, deliveryId: string, workflowId: string): Promise<void> {
  await startWebhookDelivery(deps, { projectId, workflowId, input: { deliveryId, retryDelaysMs: deps.retryDelaysMs } });
}

/**
 * POST /api/webhooks/:id/test: a `webhook.test` event through the same delivery workflow as real
 * events (headers, signature, retries, records), whatever the subscription's `events` list.
 */
export async function sendTestEvent(deps: DeliveryDeps, projectId: string, subscriptionId: string): Promise<{ deliveryId: string; eventId: string }> {
  const subscription = await getSubscription(deps, projectId, subscriptionId);
  if (!subscription.isActive) throw new AppError('ERR_WEBHOOK_004');
  const event = envelope({
    id: randomUUID(),
    type: TEST_EVENT_TYPE,
    timestamp: new Date().toISOString(),
    data: { subscriptionId: subscription.id, message: 'Test event from Formwork: your endpoint is reachable.' },
  });
  const [deliveryId] = await createDeliveries(deps.db, [
    { projectId, source: 'document', key: subscription.id, subscriptionId: subscription.id, url: subscription.url, eventId: event.id, eventType: event.type, payload: { ...event } },
  ]);
  try {
    await startDeliveryWorkflow(deps, projectId, deliveryId, workflowIds.webhookDelivery(deliveryId));
  } catch (err) {
    // Left pending, it could never be retried (retry takes failed deliveries): make it retryable.
    await abandonDelivery(deps.db, 'webhook_deliveries', deliveryId, ['pending']);
    throw err;
  }
  return { deliveryId, eventId: event.id };
}

/** The codes a retry answers with: the document ones by default, Flow's for Flow deliveries. */
export interface RetryCodes {
  notFound: ErrorCode;
  alreadyCompleted: ErrorCode;
  inProgress: ErrorCode;
  inactive: ErrorCode;
}

const DOCUMENT_RETRY_CODES: RetryCodes = {
  notFound: 'ERR_WEBHOOK_002',
  alreadyCompleted: 'ERR_WEBHOOK_003',
  inProgress: 'ERR_WEBHOOK_005',
  inactive: 'ERR_WEBHOOK_004',
};

/** For `POST /api/flow/deliveries/:id/retry` (spec, Flow deliveries). */
export const FLOW_RETRY_CODES: RetryCodes = {
  notFound: 'FLOW.DELIVERY_NOT_FOUND',
  alreadyCompleted: 'FLOW.DELIVERY_ALREADY_COMPLETED',
  inProgress: 'ERR_WEBHOOK_005',
  inactive: 'ERR_WEBHOOK_004',
};

export interface RetryDeliveryInput {
  projectId: string;
  deliveryId: string;
  /** Which deliveries this caller may retry (default 'document'); others are "not found". */
  source?: DeliverySource;
  codes?: RetryCodes;
}

/**
 * Manual retry (spec, States: Delivery) through the one retry of api/deliveries/delivery-retry.ts: a
 * failed delivery is re-enqueued as a new workflow run (`webhook-delivery-<id>-retry-<n>`) with the
 * full schedule; a completed one is 409. Pending or delivering ones are 409 too: their own schedule is
 * still running.
 */
export async function retryWebhookDelivery(deps: DeliveryDeps, input: RetryDeliveryInput): Promise<{ deliveryId: string; workflowId: string }> {
  const source = input.source ?? 'document';
  const codes = input.codes ?? DOCUMENT_RETRY_CODES;
  if (!isUuid(input.deliveryId)) throw new AppError(codes.notFound);
  const workflowId = (retry: number) => workflowIds.webhookDeliveryRetry(input.deliveryId, retry);
  const retry = await retryDelivery(deps.db, 'webhook_deliveries', input.deliveryId, {
    scope: [input.projectId, source],
    refusal: () => whyNotRetryable(deps.db, input.deliveryId, input.projectId, source, codes),
    start: (n) => startDeliveryWorkflow(deps, input.projectId, input.deliveryId, workflowId(n)),
  });
  return { deliveryId: input.deliveryId, workflowId: workflowId(retry) };
}

async function whyNotRetryable(db: DataSource, deliveryId: string, projectId: string, source: DeliverySource, codes: RetryCodes): Promise<AppError> {
  const [row]: Array<{ status: string; subscription_state: string | null }> = await db.query(
    `SELECT d.status,
            CASE WHEN d.subscription_id IS NULL THEN NULL WHEN s.deleted_at IS NOT NULL THEN 'deleted'
                 WHEN s.is_active THEN 'active' ELSE 'inactive' END AS subscription_state
       FROM webhook_deliveries d LEFT JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1 AND d.project_id = $2 AND d.source = $3`,
    [deliveryId, projectId, source],
  );
  if (!row || row.subscription_state === 'deleted') return new AppError(codes.notFound);
  if (row.status === 'completed') return new AppError(codes.alreadyCompleted);
  if (row.status !== 'failed') return new AppError(codes.inProgress);
  return new AppError(codes.inactive);
}
