import { randomUUID } from 'node:crypto';
import type { TestApp } from '../../support/app';
import type { SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';

/** Small helpers shared by the webhook test files. */

/** A team project owned by `owner` with users in the given roles, inserted directly (the guards only read memberships). */
export async function teamWithMembers(app: TestApp, owner: SignedUpUser, members: Array<{ user: SignedUpUser; role: 'admin' | 'member' | 'viewer' }>): Promise<string> {
  const db = app.services.db;
  const id = randomUUID();
  await db.query(`INSERT INTO projects (id, name, slug, is_personal, owner_id) VALUES ($1, 'Hooks team', $2, false, $3)`, [id, `hooks-${id}`, owner.id]);
  await db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'owner')`, [id, owner.id]);
  for (const m of members) await db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [id, m.user.id, m.role]);
  return id;
}

/** An API key of the caller's active project, with exactly the given permission flags. */
export async function apiKey(app: TestApp, user: SignedUpUser, permissions: Record<string, boolean>, teamId?: string): Promise<string> {
  const res = await app.request('POST', '/api/api-keys', {
    token: user.accessToken,
    headers: teamId ? { 'X-Team-Id': teamId } : {},
    body: { name: 'webhooks test', permissions },
  });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body.plainKey;
}

export async function subscribe(app: TestApp, token: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  const res = await app.request('POST', '/api/webhooks', { token, headers, body: { events: ['document.generated'], ...body } });
  if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Sends the test event and returns its delivery id. */
export async function sendTest(app: TestApp, token: string, subscriptionId: string): Promise<string> {
  const res = await app.request('POST', `/api/webhooks/${subscriptionId}/test`, { token });
  if (res.status !== 201) throw new Error(`test failed: ${res.status} ${res.text}`);
  return res.body.deliveryId;
}

/** Polls the delivery record until `done` holds for it. */
export async function waitForDelivery(app: TestApp, token: string, deliveryId: string, done: (d: any) => boolean, what = 'delivery'): Promise<any> {
  return waitFor(
    async () => {
      const res = await app.request('GET', `/api/webhooks/deliveries/${deliveryId}`, { token });
      return res.status === 200 && done(res.body) ? res.body : undefined;
    },
    { what, timeoutMs: 20000 },
  );
}

export const ended = (d: any) => d.status === 'completed' || d.status === 'failed';
