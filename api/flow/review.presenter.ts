import type { ObjectSchema } from '../../domain/flow/gate.types';
import { presentReviewApproval, type ApprovalRow } from './approvals.presenter';

/**
 * The review detail (GET /api/flow/review/approvals/:id): the approval plus what the approver
 * decides on: the payload, the schema it was checked against (its fields' titles and descriptions
 * label the reviewer's summary), when it was submitted, and the rendered document if any.
 */
export function presentReviewDetail(
  a: ApprovalRow,
  run: { payload: unknown; artefactUrl: string | null; schema: ObjectSchema | null; document: { contentType: string } | null; submittedAt: string | null },
) {
  return {
    ...presentReviewApproval(a, run),
    schema: run.schema,
    submittedAt: run.submittedAt,
    document: run.document ? { contentType: run.document.contentType, url: `/api/flow/review/approvals/${a.id}/document` } : null,
  };
}
