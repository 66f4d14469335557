import type { DataSource } from 'typeorm';
import { abandonDelivery, reopenDelivery, type DeliveryTable } from '../../db/deliveries/delivery-state';
import type { AppError } from '../../domain/errors';

/**
 * The one manual retry of the three APIs (docs/webhooks.md "Delivery records"; docs/reporting.md
 * "Deliveries"): a failed delivery is reopened `pending` and counted in one conditional UPDATE (of
 * two concurrent retries only one moves the row), a refusal says why, and the retry's workflow
 * starts with the full schedule again. A start that fails leaves it `failed`, retryable again
 * (left pending it never could be).
 */
export async function retryDelivery(
  db: DataSource,
  table: DeliveryTable,
  deliveryId: string,
  how: { scope?: [projectId: string, source: string]; refusal(): Promise<AppError>; start(retry: number): Promise<void> | void },
): Promise<number> {
  const retry = await reopenDelivery(db, table, deliveryId, how.scope);
  if (retry === undefined) throw await how.refusal();
  try {
    await how.start(retry);
  } catch (err) {
    await abandonDelivery(db, table, deliveryId, ['pending']);
    throw err;
  }
  return retry;
}
