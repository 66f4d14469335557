import Joi from 'joi';

const password = Joi.string().max(200);

export const updateMeSchema = Joi.object({
  name: Joi.string().trim().min(1).max(100),
  timezone: Joi.string().trim().max(100).allow(null),
  // Listed so that a client trying it hears why, instead of a generic "not allowed".
  email: Joi.any().forbidden().messages({ 'any.unknown': 'email cannot be changed here' }),
});

export const changePasswordSchema = Joi.object({
  currentPassword: password.required(),
  newPassword: Joi.string().min(8).max(200).required(),
});

export const emailPreferencesSchema = Joi.object({
  marketingEmails: Joi.boolean().strict(),
  productUpdates: Joi.boolean().strict(),
  weeklyDigest: Joi.boolean().strict(),
});

export const avatarSchema = Joi.object({
  // The byte limit is checked after the data-URL prefix is stripped (domain/identity/avatar-image.ts).
  imageData: Joi.string().min(1).required(),
});

export const deleteAccountSchema = Joi.object({
  password: password.required(),
  reason: Joi.string().trim().max(100).allow(''),
  reasonText: Joi.string().trim().max(2000).allow(''),
});

export const restoreAccountSchema = Joi.object({
  email: Joi.string().trim().lowercase().max(254).required(),
  password: password.required(),
});

export const passwordOnlySchema = Joi.object({ password: password.required() });

export const twoFactorCodeSchema = Joi.object({ code: Joi.string().trim().max(32).required() });

/** `code` (TOTP or backup code) is checked by the service: needed only while 2FA is on. */
export const disableTwoFactorSchema = Joi.object({ password: password.required(), code: Joi.string().trim().max(32) });
