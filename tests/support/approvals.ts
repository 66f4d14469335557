import { randomBytes } from 'node:crypto';
import type { TestApp } from './app';
import { linkToken } from './factories';
import { createGate, type FlowWorkspace } from './flow';
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

/** The workspace's pending approvals of one approver (API key). */
export async function pendingApprovals(app: TestApp, ws: FlowWorkspace, email: string): Promise<any[]> {
  const res = await app.request('GET', `/api/flow/approvals?email=${encodeURIComponent(email)}`, { token: ws.key });
  if (res.status !== 200) throw new Error(`list approvals failed: ${res.status} ${res.text}`);
  return res.body.data;
}
