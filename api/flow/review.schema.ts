import Joi from 'joi';

/** POST /api/flow/review/link: the magic link's token, read, not used. */
export interface LinkStatusInput {
  token: string;
}
export const linkStatusSchema = Joi.object<LinkStatusInput, true>({
  token: Joi.string().trim().min(1).max(200).required(),
});
