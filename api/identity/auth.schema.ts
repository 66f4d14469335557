import Joi from 'joi';
import type { ErrorCode } from '../../domain/errors';

const email = Joi.string().trim().lowercase().max(254).email({ tlds: false });
const password = Joi.string().min(8).max(200);

export const signupSchema = Joi.object({ email: email.required(), password: password.required(), name: Joi.string().trim().min(1).max(100).required() });
/** Contract §2: a malformed e-mail is ERR_USER_003. */
export const signupCodes: Record<string, ErrorCode> = { email: 'ERR_USER_003' };

export const loginSchema = Joi.object({
  email: Joi.string().trim().lowercase().max(254).required(),
  password: Joi.string().max(200).required(),
  code: Joi.string().trim().max(32),
});

export const refreshSchema = Joi.object({ refreshToken: Joi.string().max(200).required() });
/** The body of refresh and logout as documented: none in a browser session (X-Formwork-Session: cookie), refreshSchema otherwise. */
export const refreshBodySchema = Joi.object({ refreshToken: Joi.string().max(200).description('Required unless X-Formwork-Session: cookie') });
export const tokenSchema = Joi.object({ token: Joi.string().max(200).required() });
export const emailOnlySchema = Joi.object({ email: email.required() });
export const resetPasswordSchema = Joi.object({ token: Joi.string().max(200).required(), newPassword: password.required() });
