import Joi from 'joi';

/** POST /api/flow/review/link: the magic link's token, read, not used. */
export const linkStatusSchema = Joi.object<{ token: string }>({
  token: Joi.string().trim().min(1).max(200).required(),
});
