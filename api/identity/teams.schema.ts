import Joi from 'joi';
import type { ErrorCode } from '../../domain/errors';
import { SLUG_PATTERN } from '../../domain/identity/slugs';

const name = Joi.string().trim().min(1).max(100);
/** Lower-cased before the pattern check, so `Acme-Docs` is taken as `acme-docs`. */
const slug = Joi.string().trim().lowercase().max(64).pattern(SLUG_PATTERN);
/** Roles an invitation or role change may grant; a project has exactly one owner. */
const invitableRole = Joi.string().valid('admin', 'member', 'viewer');

export type InvitableRole = 'admin' | 'member' | 'viewer';

export interface CreateTeamInput {
  name: string;
  slug?: string;
}
export const createTeamSchema = Joi.object<CreateTeamInput, true>({ name: name.required(), slug });
export interface UpdateTeamInput {
  name?: string;
  slug?: string;
}
export const updateTeamSchema = Joi.object<UpdateTeamInput, true>({ name, slug });

export interface InviteInput {
  email: string;
  role: InvitableRole;
}
export const inviteSchema = Joi.object<InviteInput, true>({
  email: Joi.string().trim().lowercase().max(254).email({ tlds: false }).required(),
  role: invitableRole.default('member'),
});
/** A malformed address is ERR_USER_003, as at signup. */
export const inviteCodes: Record<string, ErrorCode> = { email: 'ERR_USER_003' };

export interface RoleInput {
  role: InvitableRole;
}
export const roleSchema = Joi.object<RoleInput, true>({ role: invitableRole.required() });

/** The token from the e-mailed link; optional when the caller's address is verified. */
export interface DecideInvitationInput {
  token?: string;
}
export const decideInvitationSchema = Joi.object<DecideInvitationInput, true>({ token: Joi.string().max(200) });

/** `GET /api/teams/invitations/:id?token=…`: the token of the e-mailed link is the credential. */
export interface InvitationLinkQuery {
  token: string;
}
export const invitationLinkQuerySchema = Joi.object<InvitationLinkQuery, true>({ token: Joi.string().max(200).required() });

/** Newest first, paged like the other lists (`page` from 1); `limit` keeps its default of 50. */
export interface ActivityQuery {
  limit: number;
  page: number;
}
export const activityQuerySchema = Joi.object<ActivityQuery, true>({
  limit: Joi.number().integer().min(1).max(100).default(50),
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
});
