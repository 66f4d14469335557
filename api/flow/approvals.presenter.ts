/** Approval rows as the API shows them (docs/flow.md, "Approvals API"). */

export interface ApprovalRow {
  id: string;
  run_id: string;
  run_short_id: string;
  run_status: string;
  gate_id: string;
  gate_name: string;
  approver_email: string;
  approver_name: string | null;
  status: string;
  comment: string | null;
  decided_at: Date | null;
  magic_token_expires_at: Date | null;
  sent_count: number;
  last_sent_at: Date | null;
  created_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function presentApproval(a: ApprovalRow) {
  return {
    id: a.id,
    runId: a.run_id,
    runShortId: a.run_short_id,
    runStatus: a.run_status,
    gateId: a.gate_id,
    gateName: a.gate_name,
    approverEmail: a.approver_email,
    approverName: a.approver_name,
    status: a.status,
    comment: a.comment,
    decidedAt: iso(a.decided_at),
    expiresAt: iso(a.magic_token_expires_at),
    sentCount: a.sent_count,
    lastSentAt: iso(a.last_sent_at),
    createdAt: iso(a.created_at),
  };
}

/** The review detail: the approval plus what the approver decides on. */
export function presentReviewApproval(a: ApprovalRow, run: { payload: unknown; artefactUrl: string | null }) {
  return { ...presentApproval(a), payload: run.payload, artefactUrl: run.artefactUrl };
}
