import type { DeliveryChannel } from '../../domain/flow/gate-settings';
import type { Queryable } from '../sql';
import { GateEntity } from './gate.entity';
import { deliveryIdFor } from '../webhooks/deliveries';

/**
 * The gate channel a Flow delivery goes to, as the gate holds it now (docs/flow.md "Delivery
 * channels: checked when saved and when used"): a delivery row keeps the URL, secret and headers
 * it was created with, but an attempt (a manual retry after the channel was fixed included) sends
 * to the channel as it is now. A channel has no id of its own; it is the gate's channel at the
 * position it had when the run delivered, which the delivery's id names (db/webhooks/deliveries.ts
 * derives it from `channel-<index>`).
 *
 * Answers undefined for a delivery that is not a Flow channel's, and `removed` when the gate or
 * that channel no longer exists.
 */
export async function currentFlowChannel(db: Queryable, deliveryId: string): Promise<DeliveryChannel | 'removed' | undefined> {
  const rows: Array<{ projectId: string; eventId: string; gateId: string }> = await db.query(
    `SELECT d.project_id AS "projectId", d.event_id AS "eventId", r.gate_id AS "gateId"
       FROM webhook_deliveries d JOIN flow_runs r ON r.id = d.run_id::uuid
      WHERE d.id = $1 AND d.source = 'flow'`,
    [deliveryId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const gate = await db.getRepository(GateEntity).findOneBy({ id: row.gateId, projectId: row.projectId });
  if (!gate || gate.deletedAt) return 'removed';
  const index = gate.deliveryChannels.findIndex((_c, i) => deliveryIdFor(row.projectId, 'flow', row.eventId, `channel-${i}`) === deliveryId);
  if (index >= 0) return gate.deliveryChannels[index];
  // The channel's position is past the gate's channels now (a gate holds at most 10: api/flow/gates.schema.ts).
  for (let i = gate.deliveryChannels.length; i < 10; i += 1) {
    if (deliveryIdFor(row.projectId, 'flow', row.eventId, `channel-${i}`) === deliveryId) return 'removed';
  }
  return undefined;
}
