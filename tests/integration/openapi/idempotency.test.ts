import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';

/**
 * The document's `Idempotency-Key` parameter against the running API: every POST is sent with a
 * key the middleware refuses ('bad key' has a space). Only a route that mounts `idempotent()`
 * answers 400 ERR_VALID_001 naming the field `Idempotency-Key`; the others ignore the header. The
 * set of routes that answer so must be the set the document flags.
 */
let t: TestApp;
let owner: SignedUpUser;
beforeAll(async () => {
  t = await startTestApp({ worker: false, smtp: false });
  owner = await signUp(t);
});
afterAll(async () => {
  await t?.close();
});

type Parameter = { $ref?: string };
type Doc = { paths: Record<string, Record<string, { security: Array<Record<string, string[]>>; parameters?: Parameter[] }>> };

/** POSTs whose credential this test cannot hold; none takes Idempotency-Key (the middleware needs a project scope). */
const EXCLUDED: Record<string, string> = {
  'post /api/agents/me/sessions': 'agent protocol: needs an agent token (fmag_…)',
  'post /api/agents/me/heartbeat': 'agent protocol: needs an agent token (fmag_…)',
  'post /api/agents/me/tasks/{taskId}/failure': 'agent protocol: needs an agent token (fmag_…)',
  'post /api/agents/me/tasks/{taskId}/result': 'agent protocol: needs an agent token (fmag_…)',
  'post /api/flow/review/approvals/{id}/approve': 'reviewer API: needs a reviewer session (fmrv_…) from a magic link',
  'post /api/flow/review/approvals/{id}/reject': 'reviewer API: needs a reviewer session (fmrv_…) from a magic link',
};

test('the operations that list Idempotency-Key are exactly the routes that check it', async () => {
  const doc = (await t.request<Doc>('GET', '/api/openapi.json')).body;
  const posts = Object.entries(doc.paths).flatMap(([path, methods]) => (methods.post ? [{ key: `post ${path}`, path, op: methods.post }] : []));
  const unreachable = posts.filter(({ op }) => op.security.some((s) => 'agentToken' in s || 'reviewToken' in s)).map((p) => p.key);
  expect(unreachable.sort()).toEqual(Object.keys(EXCLUDED).sort());

  const flagged = posts.filter(({ op }) => (op.parameters ?? []).some((p) => p.$ref === '#/components/parameters/IdempotencyKey')).map((p) => p.key);
  const checking: string[] = [];
  for (const { key, path, op } of posts) {
    if (key in EXCLUDED) continue;
    const url = path.replace(/\{[^}]+\}/g, () => randomUUID());
    const token = op.security.length ? owner.accessToken : undefined;
    const res = await t.request('POST', url, { token, body: {}, headers: { 'Idempotency-Key': 'bad key' } });
    if (res.status === 400 && res.body?.code === 'ERR_VALID_001' && res.body?.relatedInfo?.field === 'Idempotency-Key') checking.push(key);
  }
  expect(checking.sort()).toEqual(flagged.sort());
  // The routes of docs/idempotency.md: both document prefixes (merge included), Flow, templates (three prefixes), keys, webhooks, reporting.
  expect(checking).toHaveLength(21);
});
