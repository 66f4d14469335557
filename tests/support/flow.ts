import type { TestApp } from './app';
import { createKey } from './api-keys';
import { signUp, type SignedUpUser } from './factories';

export interface FlowWorkspace {
  user: SignedUpUser;
  /** Plain API key of the workspace. */
  key: string;
  projectId: string;
}

/**
 * What a Flow workspace's key asks for: the everyday flags, plus `manage_gates` and `read_runs`,
 * which a key gets only when asked for (issue 29).
 */
export const FLOW_KEY_PERMISSIONS = { generate_documents: true, read_documents: true, read_templates: true, manage_gates: true, read_runs: true };

/**
 * A verified user, their personal project as the Flow workspace, and an API key of it (with
 * FLOW_KEY_PERMISSIONS). The address is marked verified directly, so Flow tests need no mail
 * workflow (auth tests cover it).
 */
export async function flowWorkspace(app: TestApp, plan?: string): Promise<FlowWorkspace> {
  const user = await signUp(app);
  await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
  const created = await createKey(app, user.accessToken, { name: 'flow workspace', permissions: FLOW_KEY_PERMISSIONS });
  if (plan) await app.services.db.query(`UPDATE projects SET plan = $1 WHERE id = $2`, [plan, created.teamId]);
  return { user, key: created.plainKey, projectId: created.teamId };
}

/** Creates a gate through the API and returns its body (throws unless 201). */
export async function createGate(app: TestApp, key: string, body: Record<string, unknown>): Promise<any> {
  const res = await app.request('POST', '/api/flow/gates', { token: key, body });
  if (res.status !== 201) throw new Error(`create gate failed: ${res.status} ${res.text}`);
  return res.body;
}

export const invoiceSchema = {
  type: 'object',
  properties: {
    customer: { type: 'string', required: true, minLength: 2 },
    email: { type: 'string', format: 'email' },
    items: {
      type: 'array',
      required: true,
      items: { type: 'object', properties: { price: { type: 'number', required: true, min: 0 }, qty: { type: 'integer', min: 1 } } },
    },
  },
};

export const invoiceRules = [{ id: 'total', name: 'Total above zero', expression: '$sum(items.(price * qty)) > 0', message: 'The total must be above zero' }];
