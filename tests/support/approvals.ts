import { randomBytes } from 'node:crypto';
import { addTeamProject, createKey } from './api-keys';
import type { TestApp } from './app';
import { linkToken, signUp } from './factories';
import { createGate, FLOW_KEY_PERMISSIONS, type FlowWorkspace } from './flow';
import type { ParsedMail } from './smtp-server';
import { waitFor } from './wait';

/** A fresh approver address, so every test reads only its own mail. */
export const approverEmail = (tag = 'approver') => `${tag}-${randomBytes(4).toString('hex')}@example.com`;

/** A manual-approval gate (no schema: any object passes). */
export async function manualGate(app: TestApp, ws: FlowWorkspace, approvalConfig: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<any> {
  return createGate(app, ws.key, { name: `Approvals ${randomBytes(3).toString('hex')}`, approvalMode: 'manual', approvalConfig, ...extra });
}

/** Validates a payload through the gate; the run's workflow starts in the background. */
export async function submit(app: TestApp, ws: FlowWorkspace, gate: any, payload: Record<string, unknown> = { customer: 'Ada', amount: 42 }): Promise<string> {
  const res = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: payload });
  if (res.status !== 200) throw new Error(`validate failed: ${res.status} ${res.text}`);
  return res.body.runId;
}

export async function runOf(app: TestApp, ws: FlowWorkspace, runId: string): Promise<any> {
  return (await app.request('GET', `/api/flow/runs/${runId}`, { token: ws.key })).body;
}

/** Waits until the run's status is one of `statuses`; returns the run. */
export function waitForRunStatus(app: TestApp, ws: FlowWorkspace, runId: string, statuses: string[], timeoutMs = 20_000): Promise<any> {
  return waitFor(
    async () => {
      const run = await runOf(app, ws, runId);
      return statuses.includes(run.status) ? run : undefined;
    },
    { timeoutMs, what: `run ${runId} in ${statuses.join('|')}` },
  );
}

/** The n-th (1-based) approval e-mail sent to `email` whose subject matches. */
export async function approvalMail(app: TestApp, email: string, n = 1, subject = /approval needed/i): Promise<ParsedMail> {
  const mine = () => app.smtp!.messages.filter((m) => m.to.includes(email) && subject.test(m.subject));
  return waitFor(() => mine()[n - 1], { timeoutMs: 20_000, what: `approval mail #${n} to ${email}` });
}

export const magicToken = (mail: ParsedMail) => linkToken(mail, '/review');

/** An approver who is a person of the workspace: a verified user with that e-mail, member of its project. */
export interface Approver {
  email: string;
  userId: string;
  /** The user's JWT. */
  token: string;
  /** X-Team-Id of the workspace, for calls made with the JWT. */
  headers: Record<string, string>;
}

/**
 * Signs `email` up (verified directly, like flowWorkspace) and makes it a member of the workspace's
 * project, so the person can list and decide their approvals with their own JWT.
 */
export async function approverIn(app: TestApp, ws: FlowWorkspace, email: string, role: 'member' | 'viewer' | 'admin' = 'member'): Promise<Approver> {
  const user = await signUp(app, { overrides: { email } });
  await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
  await app.services.db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [ws.projectId, user.id, role]);
  return { email, userId: user.id, token: user.accessToken, headers: { 'X-Team-Id': ws.projectId } };
}

/**
 * A Flow workspace that is a team project (people other than the owner can be members of it):
 * a verified owner, the team project on `plan`, and an API key the owner created in it.
 */
export async function teamFlowWorkspace(app: TestApp, plan?: string): Promise<FlowWorkspace> {
  const user = await signUp(app);
  await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
  const projectId = await addTeamProject(app.services.db, user.id);
  const created = await createKey(app, user.accessToken, { name: 'flow workspace', permissions: FLOW_KEY_PERMISSIONS }, projectId);
  if (plan) await app.services.db.query(`UPDATE projects SET plan = $1 WHERE id = $2`, [plan, projectId]);
  return { user, key: created.plainKey, projectId };
}

/** The approver's own pending approvals (their JWT in the workspace). */
export async function myApprovals(app: TestApp, who: Approver): Promise<any[]> {
  const res = await app.request('GET', '/api/flow/approvals', { token: who.token, headers: who.headers });
  if (res.status !== 200) throw new Error(`list approvals failed: ${res.status} ${res.text}`);
  return res.body.data;
}
