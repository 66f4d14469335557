import Joi from 'joi';

/** Spec, Limits 4: an approval or rejection comment is at most 1000 characters. */
export interface DecisionInput {
  comment?: string;
}
export const decisionSchema = Joi.object<DecisionInput, true>({ comment: Joi.string().allow('').max(1000) });

export interface ListApprovalsQuery {
  page: number;
  limit: number;
}
export const listApprovalsSchema = Joi.object<ListApprovalsQuery, true>({
  page: Joi.number().integer().min(1).default(1),
  limit: Joi.number().integer().min(1).max(100).default(25),
});

/** The signed-in approver's list: `pending` (the default, the spec's list) or `decided` (approved, rejected or expired). */
export interface MyApprovalsQuery extends ListApprovalsQuery {
  status: 'pending' | 'decided';
}
export const myApprovalsSchema = Joi.object<MyApprovalsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(25),
  status: Joi.string().valid('pending', 'decided').default('pending'),
});

export interface MagicLinkInput {
  token: string;
  email: string;
}
export const magicLinkSchema = Joi.object<MagicLinkInput, true>({
  token: Joi.string().trim().min(1).max(200).required(),
  email: Joi.string().trim().lowercase().max(320).required(),
});
