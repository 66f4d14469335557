import Joi from 'joi';
import type { ErrorCode } from '../../domain/errors';

const email = Joi.string().trim().lowercase().max(254).email({ tlds: false });
const password = Joi.string().min(8).max(200);

export interface SignupInput {
  email: string;
  password: string;
  name: string;
}
export const signupSchema = Joi.object<SignupInput, true>({ email: email.required(), password: password.required(), name: Joi.string().trim().min(1).max(100).required() });
/** Contract §2: a malformed e-mail is ERR_USER_003. */
export const signupCodes: Record<string, ErrorCode> = { email: 'ERR_USER_003' };

export interface LoginInput {
  email: string;
  password: string;
  code?: string;
}
export const loginSchema = Joi.object<LoginInput, true>({
  email: Joi.string().trim().lowercase().max(254).required(),
  password: Joi.string().max(200).required(),
  code: Joi.string().trim().max(32),
});

export interface RefreshInput {
  refreshToken: string;
}
export const refreshSchema = Joi.object<RefreshInput, true>({ refreshToken: Joi.string().max(200).required() });
/** The body of refresh and logout as documented: none in a browser session (X-Formwork-Session: cookie), refreshSchema otherwise. */
export const refreshBodySchema = Joi.object<Partial<RefreshInput>, true>({ refreshToken: Joi.string().max(200).description('Required unless X-Formwork-Session: cookie') });
export interface TokenInput {
  token: string;
}
export const tokenSchema = Joi.object<TokenInput, true>({ token: Joi.string().max(200).required() });
export interface EmailOnlyInput {
  email: string;
}
export const emailOnlySchema = Joi.object<EmailOnlyInput, true>({ email: email.required() });
/** Forgot-password: a malformed e-mail is ERR_USER_003, as at signup. */
export const emailOnlyCodes: Record<string, ErrorCode> = { email: 'ERR_USER_003' };
export interface ResetPasswordInput {
  token: string;
  newPassword: string;
}
export const resetPasswordSchema = Joi.object<ResetPasswordInput, true>({ token: Joi.string().max(200).required(), newPassword: password.required() });
