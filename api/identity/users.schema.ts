import Joi from 'joi';

const password = Joi.string().max(200);

export interface UpdateMeInput {
  name?: string;
  timezone?: string | null;
  /** Refused with its own message: never present in a validated body. */
  email?: undefined;
}
export const updateMeSchema = Joi.object<UpdateMeInput, true>({
  name: Joi.string().trim().min(1).max(100),
  timezone: Joi.string().trim().max(100).allow(null),
  // Listed so that a client trying it hears why, instead of a generic "not allowed".
  // Joi's strict map asks a string schema of a field typed `undefined`; this one refuses any value.
  email: Joi.any().forbidden().messages({ 'any.unknown': 'email cannot be changed here' }) as unknown as Joi.StringSchema,
});

export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
}
export const changePasswordSchema = Joi.object<ChangePasswordInput, true>({
  currentPassword: password.required(),
  newPassword: Joi.string().min(8).max(200).required(),
});

export interface EmailPreferencesInput {
  marketingEmails?: boolean;
  productUpdates?: boolean;
  weeklyDigest?: boolean;
}
export const emailPreferencesSchema = Joi.object<EmailPreferencesInput, true>({
  marketingEmails: Joi.boolean().strict(),
  productUpdates: Joi.boolean().strict(),
  weeklyDigest: Joi.boolean().strict(),
});

export interface AvatarInput {
  imageData: string;
}
export const avatarSchema = Joi.object<AvatarInput, true>({
  // The byte limit is checked after the data-URL prefix is stripped (domain/identity/avatar-image.ts).
  imageData: Joi.string().min(1).required(),
});

export interface DeleteAccountInput {
  password: string;
  reason?: string;
  reasonText?: string;
}
export const deleteAccountSchema = Joi.object<DeleteAccountInput, true>({
  password: password.required(),
  reason: Joi.string().trim().max(100).allow(''),
  reasonText: Joi.string().trim().max(2000).allow(''),
});

export interface RestoreAccountInput {
  email: string;
  password: string;
}
export const restoreAccountSchema = Joi.object<RestoreAccountInput, true>({
  email: Joi.string().trim().lowercase().max(254).required(),
  password: password.required(),
});

export interface PasswordOnlyInput {
  password: string;
}
export const passwordOnlySchema = Joi.object<PasswordOnlyInput, true>({ password: password.required() });

export interface TwoFactorCodeInput {
  code: string;
}
export const twoFactorCodeSchema = Joi.object<TwoFactorCodeInput, true>({ code: Joi.string().trim().max(32).required() });

/** `code` (TOTP or backup code) is checked by the service: needed only while 2FA is on. */
export interface DisableTwoFactorInput {
  password: string;
  code?: string;
}
export const disableTwoFactorSchema = Joi.object<DisableTwoFactorInput, true>({ password: password.required(), code: Joi.string().trim().max(32) });
