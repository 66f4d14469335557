import { randomUUID } from 'node:crypto';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { sendApprovalLinks, type ApprovalMailDeps } from '../../db/flow/approval-mail';
import type { ArtefactStorage, StoredObject } from '../../adapters/storage/storage';
import type { ObjectSchema } from '../../domain/flow/gate.types';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import { randomToken, sha256Hex } from '../../domain/signing';
import type { CredentialResolver } from '../middleware/authenticate';
import { consumeOrRefuse, type ResendLimiters } from '../rate-limits';
import type { ApprovalRow } from './approvals.presenter';
import type { MagicLinkInput } from './approvals.schema';
import { getApproval } from './approvals.service';
import { getRun, readRunArtefact } from './runs.service';

/**
 * External approvers (docs/flow.md, "Review API"): a magic-link token plus the approver's e-mail buys
 * a review token (`fmrv_…`) bound to that e-mail and to the project of the link's approval: it
 * opens that e-mail's approvals in that project only, never another tenant's (docs/security.md,
 * "Approvals"). Only hashes of both are stored.
 */
const REVIEW_TOKEN_PREFIX = 'fmrv_';

interface MagicApproval {
  id: string;
  run_id: string;
  project_id: string;
  approver_email: string;
  magic_token_expires_at: Date;
}

/** The pending approval a magic-link token belongs to, if the e-mail is its approver's; one 401 otherwise. */
async function approvalOfMagicLink(db: DataSource, input: MagicLinkInput): Promise<MagicApproval> {
  const [row]: MagicApproval[] = await db.query(
    `SELECT id, run_id, project_id, approver_email, magic_token_expires_at FROM flow_approvals
      WHERE magic_token_hash = $1 AND status = 'pending' AND magic_token_expires_at > now()`,
    [sha256Hex(input.token)],
  );
  if (!row || row.approver_email !== input.email.trim().toLowerCase()) throw new AppError('FLOW.REVIEW_LINK_INVALID');
  return row;
}

/**
 * Spec: POST /api/flow/review/authenticate → `{reviewToken, expiresIn}` (seconds). A link opens one
 * session: the exchange marks it used and takes it off the approval, so a link found later (a
 * forwarded mail, a shared screen) opens nothing; the page then offers a new one.
 */
export async function authenticateReviewer(db: DataSource, ttlSeconds: number, input: MagicLinkInput): Promise<{ reviewToken: string; expiresIn: number; approvalId: string }> {
  const approval = await approvalOfMagicLink(db, input);
  const hash = sha256Hex(input.token);
  // Of two exchanges of one link exactly one clears it.
  const [taken] = await modifyReturning<{ id: string }>(
    db,
    `UPDATE flow_approvals SET magic_token_hash = NULL WHERE id = $1 AND magic_token_hash = $2 RETURNING id`,
    [approval.id, hash],
  );
  if (!taken) throw new AppError('FLOW.REVIEW_LINK_INVALID');
  await db.query(`UPDATE flow_review_links SET used_at = now() WHERE token_hash = $1`, [hash]);
  const windowLeft = Math.floor((new Date(approval.magic_token_expires_at).getTime() - Date.now()) / 1000);
  const expiresIn = Math.max(1, Math.min(ttlSeconds, windowLeft));
  const reviewToken = REVIEW_TOKEN_PREFIX + randomToken(32);
  await db.query(
    `INSERT INTO flow_review_tokens (id, email, project_id, token_hash, expires_at) VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second')`,
    [randomUUID(), approval.approver_email, approval.project_id, sha256Hex(reviewToken), expiresIn],
  );
  return { reviewToken, expiresIn, approvalId: approval.id };
}

/** What became of a magic link (POST /api/flow/review/link): the reviewer's page says it in words. */
export type LinkState = 'valid' | 'used' | 'replaced' | 'expired' | 'decided' | 'invalid';

export interface LinkStatus {
  state: LinkState;
  /** Whether POST /api/flow/review/resend can send a new link from this one (its approval still waits). */
  canResend: boolean;
  /** The approval's decision (`approved`, `rejected`, `expired`) once there is one. */
  decision: string | null;
  decidedAt: string | null;
  /** The end of the approval's window. */
  expiresAt: string | null;
}

/**
 * Reads a link and changes nothing (a mail scanner may send it too). Only the token's holder learns
 * this, and nothing about the approval beyond its state and times.
 */
export async function magicLinkStatus(db: DataSource, token: string): Promise<LinkStatus> {
  const hash = sha256Hex(token);
  const [row]: Array<{ used_at: Date | null; status: string; current: boolean; decided_at: Date | null; expires_at: Date | null; open: boolean }> = await db.query(
    `SELECT l.used_at, a.status, a.magic_token_hash IS NOT DISTINCT FROM l.token_hash AS current, a.decided_at,
            a.magic_token_expires_at AS expires_at, a.magic_token_expires_at > now() AS open
       FROM flow_review_links l JOIN flow_approvals a ON a.id = l.approval_id WHERE l.token_hash = $1`,
    [hash],
  );
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  if (!row) return { state: 'invalid', canResend: false, decision: null, decidedAt: null, expiresAt: null };
  const base = { decision: row.status === 'pending' ? null : row.status, decidedAt: iso(row.decided_at), expiresAt: iso(row.expires_at) };
  if (row.status === 'expired' || (row.status === 'pending' && !row.open)) return { ...base, state: 'expired', canResend: false };
  if (row.status !== 'pending') return { ...base, state: 'decided', canResend: false };
  if (row.used_at) return { ...base, state: 'used', canResend: true };
  if (!row.current) return { ...base, state: 'replaced', canResend: true };
  return { ...base, state: 'valid', canResend: true };
}

/** Resolves `Authorization: Bearer fmrv_…` to the `review` principal (registered by api/app.ts). */
export function reviewTokenResolver(db: DataSource): CredentialResolver {
  return {
    matches: (token) => token.startsWith(REVIEW_TOKEN_PREFIX),
    resolve: (token) => resolveReviewToken(db, token),
  };
}

export async function resolveReviewToken(db: DataSource, token: string): Promise<Principal & { kind: 'review' }> {
  const [row]: Array<{ id: string; email: string; project_id: string }> = await db.query(
    `SELECT id, email, project_id FROM flow_review_tokens WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()`,
    [sha256Hex(token)],
  );
  if (!row) throw new AppError('FLOW.REVIEW_TOKEN_INVALID');
  const pending: Array<{ id: string }> = await db.query(
    `SELECT id FROM flow_approvals WHERE approver_email = $1 AND project_id = $2 AND status = 'pending'`,
    [row.email, row.project_id],
  );
  return { kind: 'review', reviewerId: row.id, email: row.email, projectId: row.project_id, approvalIds: pending.map((p) => p.id) };
}

/**
 * Spec: POST /api/flow/review/resend: a fresh magic link to that approver (the old link stops working).
 * Besides its own per-10-minutes limit, it spends the approver's and the project's hourly re-send
 * budgets shared with POST /api/flow/approvals/resend (429 ERR_LIMIT_012 / ERR_LIMIT_013).
 */
export async function resendMagicLink(deps: ApprovalMailDeps & { limiter: RateLimiterAbstract; limits: ResendLimiters }, input: MagicLinkInput): Promise<{ success: true }> {
  const approval = await approvalOfAnyLink(deps.db, input);
  try {
    await deps.limiter.consume(approval.approver_email);
  } catch (err) {
    if (err instanceof Error) throw err;
    throw new AppError('ERR_QUOTA_003', 'Too many resend requests for this e-mail; try again later', { retryAfter: Math.max(1, Math.ceil(((err as { msBeforeNext?: number }).msBeforeNext ?? 0) / 1000)) });
  }
  await consumeOrRefuse(deps.limits.perRecipient, approval.approver_email.toLowerCase(), 'ERR_LIMIT_012');
  await consumeOrRefuse(deps.limits.perProject, approval.project_id, 'ERR_LIMIT_013');
  await sendApprovalLinks(deps, approval.run_id, 'resend', { email: approval.approver_email });
  return { success: true };
}

/**
 * The still-pending approval any link of it belongs to (the newest, a used one or one a newer link
 * replaced), if the e-mail is its approver's: an old link can ask for a new one, sent to the
 * approver only. One 401 otherwise, as for authenticate.
 */
async function approvalOfAnyLink(db: DataSource, input: MagicLinkInput): Promise<MagicApproval> {
  const [row]: MagicApproval[] = await db.query(
    `SELECT a.id, a.run_id, a.project_id, a.approver_email, a.magic_token_expires_at
       FROM flow_review_links l JOIN flow_approvals a ON a.id = l.approval_id
      WHERE l.token_hash = $1 AND a.status = 'pending' AND a.magic_token_expires_at > now()`,
    [sha256Hex(input.token)],
  );
  if (!row || row.approver_email !== input.email.trim().toLowerCase()) throw new AppError('FLOW.REVIEW_LINK_INVALID');
  return row;
}

/** The approval with what the approver decides on: payload, the schema it was checked against and, if rendered, a signed artefact URL. */
export async function reviewApprovalDetail(
  deps: { db: DataSource; storage: ArtefactStorage; downloadUrlTtlSeconds: number },
  scope: { projectId: string; email: string },
  id: string,
): Promise<{ approval: ApprovalRow; payload: unknown; artefactUrl: string | null; schema: ObjectSchema | null; document: { contentType: string } | null; submittedAt: string | null }> {
  const approval = await getApproval(deps.db, scope, id);
  const [run]: Array<{ input_payload: unknown; artefact_key: string | null; schema: ObjectSchema | null; created_at: Date }> = await deps.db.query(
    `SELECT r.input_payload, r.artefact_key, r.created_at,
            (SELECT v.schema FROM flow_gate_schema_versions v WHERE v.gate_id = r.gate_id AND v.version = r.schema_version) AS schema
       FROM flow_runs r WHERE r.id = $1`,
    [approval.run_id],
  );
  const artefactUrl = run?.artefact_key ? (await deps.storage.signedUrl(run.artefact_key, { ttlSeconds: deps.downloadUrlTtlSeconds })).url : null;
  return {
    approval,
    payload: run?.input_payload ?? null,
    artefactUrl,
    schema: run?.schema ?? null,
    document: run?.artefact_key ? { contentType: contentTypeOf(run.artefact_key) } : null,
    submittedAt: run ? new Date(run.created_at).toISOString() : null,
  };
}

function contentTypeOf(key: string): string {
  if (key.endsWith('.pdf')) return 'application/pdf';
  if (key.endsWith('.xlsx')) return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
  if (key.endsWith('.html')) return 'text/html';
  return 'application/octet-stream';
}

/** The run's rendered document, read from storage for the reviewer's page (which fetches only its own origin). */
export async function reviewDocument(
  deps: { db: DataSource; storage: ArtefactStorage },
  scope: { projectId: string; email: string },
  id: string,
): Promise<StoredObject> {
  const approval = await getApproval(deps.db, scope, id);
  return readRunArtefact(deps, await getRun(deps.db, scope.projectId, approval.run_id));
}
