import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { WebhookSubscriptionEntity } from '../../db/webhooks/webhook-subscription.entity';
import type { OutboundGuard } from '../../adapters/http/outbound';
import { AppError } from '../../domain/errors';
import { randomBase62 } from '../../domain/signing';
import type { CreateSubscriptionInput, PageQuery, UpdateSubscriptionInput } from './webhooks.schema';
import { isUuid } from '../../domain/ids';

/**
 * Document webhook subscriptions (contract §4). Every function acts inside one project: another
 * project's subscription is answered like one that does not exist (ERR_WEBHOOK_001).
 */

export interface SubscriptionDeps {
  db: DataSource;
  /** Checks a target URL when it is saved (ERR_OUTBOUND_001); every delivery checks it again. */
  guard: OutboundGuard;
}

export interface Creator {
  userId?: string;
  apiKeyId?: string;
}

/** Each subscription multiplies every event into a delivery and a workflow: bound the fan-out. */
const MAX_SUBSCRIPTIONS_PER_PROJECT = 25;

/** `whsec_` + 32 base62 characters (about 190 bits), the form receivers' docs show. */
function newSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

export async function createSubscription(
  deps: SubscriptionDeps,
  projectId: string,
  creator: Creator,
  input: CreateSubscriptionInput,
  /** Runs in the transaction that inserts the subscription (the Idempotency-Key's answer, docs/idempotency.md). */
  inTransaction?: (m: EntityManager, subscription: WebhookSubscriptionEntity) => Promise<void>,
): Promise<WebhookSubscriptionEntity> {
  await deps.guard.assertAllowed(input.url);
  return deps.db.transaction(async (tx) => {
    // The project row serialises concurrent creations, so the limit holds under a burst.
    await tx.query(`SELECT 1 FROM projects WHERE id = $1 FOR UPDATE`, [projectId]);
    const [{ n }] = await tx.query(`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE project_id = $1 AND deleted_at IS NULL`, [projectId]);
    if (n >= MAX_SUBSCRIPTIONS_PER_PROJECT) {
      throw new AppError('ERR_WEBHOOK_006', `A project can have at most ${MAX_SUBSCRIPTIONS_PER_PROJECT} webhook subscriptions`, {
        limit: MAX_SUBSCRIPTIONS_PER_PROJECT,
      });
    }
    const now = new Date();
    const subscription = Object.assign(new WebhookSubscriptionEntity(), {
      id: randomUUID(),
      projectId,
      url: input.url,
      events: input.events,
      description: input.description || null,
      secret: newSecret(),
      isActive: true,
      createdBy: creator.userId ?? null,
      createdByApiKeyId: creator.apiKeyId ?? null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    });
    await tx.getRepository(WebhookSubscriptionEntity).insert(subscription);
    await inTransaction?.(tx, subscription);
    return subscription;
  });
}

export async function listSubscriptions(
  deps: Pick<SubscriptionDeps, 'db'>,
  projectId: string,
  query: PageQuery,
): Promise<{ subscriptions: WebhookSubscriptionEntity[]; total: number }> {
  const [subscriptions, total] = await deps.db
    .getRepository(WebhookSubscriptionEntity)
    .createQueryBuilder('s')
    .where('s.projectId = :projectId AND s.deletedAt IS NULL', { projectId })
    .orderBy('s.createdAt', 'DESC')
    .addOrderBy('s.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { subscriptions, total };
}

export async function getSubscription(deps: Pick<SubscriptionDeps, 'db'>, projectId: string, id: string): Promise<WebhookSubscriptionEntity> {
  const found = isUuid(id)
    ? await deps.db.getRepository(WebhookSubscriptionEntity).createQueryBuilder('s').where('s.id = :id AND s.projectId = :projectId AND s.deletedAt IS NULL', { id, projectId }).getOne()
    : null;
  if (!found) throw new AppError('ERR_WEBHOOK_001');
  return found;
}

export async function updateSubscription(
  deps: SubscriptionDeps,
  projectId: string,
  id: string,
  patch: UpdateSubscriptionInput,
): Promise<WebhookSubscriptionEntity> {
  const subscription = await getSubscription(deps, projectId, id);
  if (patch.url !== undefined && patch.url !== subscription.url) await deps.guard.assertAllowed(patch.url);
  if (patch.url !== undefined) subscription.url = patch.url;
  if (patch.events !== undefined) subscription.events = patch.events;
  if (patch.description !== undefined) subscription.description = patch.description || null;
  if (patch.isActive !== undefined) subscription.isActive = patch.isActive;
  subscription.updatedAt = new Date();
  await deps.db.getRepository(WebhookSubscriptionEntity).update(
    { id: subscription.id, projectId },
    { url: subscription.url, events: subscription.events, description: subscription.description, isActive: subscription.isActive, updatedAt: subscription.updatedAt },
  );
  return subscription;
}

/**
 * Soft delete: the subscription stops receiving events at once (pending retries end as failed,
 * "Subscription was deleted") and disappears from the API; its rows stay for the operator.
 */
export async function deleteSubscription(deps: Pick<SubscriptionDeps, 'db'>, projectId: string, id: string): Promise<void> {
  const subscription = await getSubscription(deps, projectId, id);
  await deps.db.getRepository(WebhookSubscriptionEntity).update({ id: subscription.id, projectId }, { deletedAt: new Date(), isActive: false });
}
