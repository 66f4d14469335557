import { html, listOf, noContent, ok, pageOf, type JsonSchema } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { describedOnly, operationsOf, routeTable } from '../openapi/route';
import * as apiKeys from './api-keys.schema';
import * as auth from './auth.schema';
import * as teams from './teams.schema';
import * as users from './users.schema';

/**
 * The identity routes' declarations (docs/architecture.md "One declaration per route"): sign-in, the
 * signed-in user, API keys, teams and the pages of the e-mailed links, mounted by
 * api/identity/*.routes.ts; apart from them so that the OpenAPI document is built without loading
 * the services.
 */

const message: JsonSchema = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } };

const user: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'name', 'profilePictureUrl', 'emailVerified', 'twoFactorEnabled', 'timezone', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string', format: 'email' },
    name: { type: 'string' },
    profilePictureUrl: { type: ['string', 'null'] },
    emailVerified: { type: 'boolean' },
    twoFactorEnabled: { type: 'boolean' },
    timezone: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

const session: JsonSchema = {
  type: 'object',
  required: ['user', 'accessToken', 'expiresIn'],
  properties: {
    user,
    accessToken: { type: 'string', description: 'JWT for the Authorization header' },
    refreshToken: { type: 'string', description: '`fmr_…`, for POST /api/auth/refresh; in a browser session (X-Formwork-Session: cookie) the HttpOnly cookie holds it instead' },
    expiresIn: { type: 'integer', description: 'Seconds the access token lives' },
  },
};

const sessionExample = {
  user: { id: '3f1c…', email: 'ada@example.com', name: 'Ada', profilePictureUrl: null, emailVerified: false, twoFactorEnabled: false, timezone: 'UTC', createdAt: '2026-01-01T12:00:00.000Z', updatedAt: '2026-01-01T12:00:00.000Z' },
  accessToken: 'eyJhbGciOiJIUzI1NiIs…',
  refreshToken: 'fmr_…',
  expiresIn: 900,
};

const id = { id: 'The id (UUID)' };

/** GET and PATCH /api/users/me/email-preferences. */
const EMAIL_PREFERENCES: JsonSchema = {
  type: 'object',
  required: ['preferences'],
  properties: {
    message: { type: 'string' },
    preferences: {
      type: 'object',
      required: ['marketingEmails', 'productUpdates', 'weeklyDigest'],
      properties: { marketingEmails: { type: 'boolean' }, productUpdates: { type: 'boolean' }, weeklyDigest: { type: 'boolean' } },
    },
  },
};

/** GET /api/users/me/avatar/requirements. */
const AVATAR_REQUIREMENTS: JsonSchema = {
  type: 'object',
  required: ['formats', 'maxBytes'],
  properties: {
    formats: { type: 'array', items: { type: 'string', enum: ['image/jpeg', 'image/png', 'image/webp'] }, description: 'Accepted formats, judged by the file\'s content' },
    maxBytes: { type: 'integer', description: 'The largest picture accepted, in bytes (AVATAR_MAX_BYTES)' },
  },
  additionalProperties: false,
};

const AVATAR_UPLOADED: JsonSchema = {
  type: 'object',
  required: ['message', 'avatarUrl'],
  properties: { message: { type: 'string' }, avatarUrl: { type: 'string', description: 'A signed link to the picture, expiring after DOWNLOAD_URL_TTL_SECONDS' } },
  additionalProperties: false,
};

const closed = (required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: Object.keys(required),
  properties: { ...required, ...optional },
  additionalProperties: false,
});
const str: JsonSchema = { type: 'string' };
const uuid: JsonSchema = { type: 'string', format: 'uuid' };
const time: JsonSchema = { type: 'string', format: 'date-time' };
const succeeded: JsonSchema = { type: 'boolean', const: true };

/**
 * GET /api/users/me/export (api/identity/users.service.ts exportAccount): the user's own data as stored. Its
 * top-level fields and their entries are fixed; the e-mail preferences and key permissions stay open.
 */
const ACCOUNT_EXPORT: JsonSchema = closed({
  personal: closed({ id: uuid, email: str, name: str, createdAt: time }),
  settings: closed({
    timezone: { type: ['string', 'null'] },
    emailVerified: { type: 'boolean' },
    twoFactorEnabled: { type: 'boolean' },
    emailPreferences: { type: 'object', additionalProperties: true },
    hasProfilePicture: { type: 'boolean' },
  }),
  projects: { type: 'array', items: closed({ id: uuid, name: str, slug: str, isPersonal: { type: 'boolean' }, role: str, joinedAt: time }), description: 'The projects the user is a member of' },
  apiKeys: {
    type: 'array',
    description: 'The API keys the user created (never their secrets)',
    items: closed({ id: uuid, teamId: uuid, name: str, keyPrefix: str, permissions: { type: 'object', additionalProperties: { type: 'boolean' } }, isActive: { type: 'boolean' }, createdAt: time }),
  },
  exportedAt: time,
  format: { type: 'string', enum: ['json'] },
});

/** GET /api/users/me/2fa/status. */
const TWO_FACTOR_STATUS: JsonSchema = closed({ enabled: { type: 'boolean' }, backupCodesRemaining: { type: 'integer', description: 'Unused backup codes; 0 while two-factor authentication is off' } });
const backupCodes: JsonSchema = { type: 'array', items: str, description: 'Single-use codes, shown only in this answer' };
/** POST /api/users/me/2fa/enable. */
const TWO_FACTOR_SETUP: JsonSchema = closed({
  qrCode: { type: 'string', description: 'A PNG data URL of the otpauth URL' },
  secret: { type: 'string', description: 'The TOTP secret, base32' },
  otpauthUrl: str,
  backupCodes,
});
/** POST /api/users/me/2fa/verify: the session's new tokens (the others ended); a browser session keeps its refresh token in the cookie. */
const TWO_FACTOR_ENABLED: JsonSchema = closed(
  { success: succeeded, accessToken: { type: 'string', description: 'JWT for the Authorization header' }, expiresIn: { type: 'integer', description: 'Seconds the access token lives' } },
  { refreshToken: { type: 'string', description: '`fmr_…`; in a browser session (X-Formwork-Session: cookie) the HttpOnly cookie holds it instead' } },
);

const authRoute = routeTable('Auth');
export const authEndpoints = {
  signup: authRoute('post', '/api/auth/signup', 'Create an account', {
    security: 'public',
    browserSession: true,
    request: { body: auth.signupSchema, example: { email: 'ada@example.com', password: 'a long passphrase 7', name: 'Ada' } },
    codes: auth.signupCodes,
    responses: { 201: ok('The new user, signed in', session, sessionExample) },
  }),
  login: authRoute('post', '/api/auth/login', 'Sign in', {
    description: 'With two-factor authentication on, send `code` (a TOTP or backup code) too.',
    security: 'public',
    browserSession: true,
    request: { body: auth.loginSchema, example: { email: 'ada@example.com', password: 'a long passphrase 7' } },
    responses: { 200: ok('Signed in', session, sessionExample) },
  }),
  refresh: describedOnly(authRoute('post', '/api/auth/refresh', 'Exchange a refresh token for new tokens', { security: 'public', browserSession: true, request: { body: auth.refreshBodySchema }, responses: { 200: ok('New tokens (the refresh token rotates)', session) } })),
  logout: describedOnly(authRoute('post', '/api/auth/logout', 'End the session of a refresh token', { security: 'public', browserSession: true, request: { body: auth.refreshBodySchema }, responses: { 200: ok('Logged out', message) } })),
  verifyEmail: authRoute('post', '/api/auth/verify-email', 'Verify an email address with the emailed token', { security: 'public', request: { body: auth.tokenSchema }, responses: { 200: ok('Verified', message) } }),
  resendVerification: authRoute('post', '/api/auth/resend-verification', 'Send the verification email again', { security: 'user', responses: { 200: ok('Sent, or already verified', message) } }),
  forgotPassword: authRoute('post', '/api/auth/forgot-password', 'Email a password reset link', { security: 'public', request: { body: auth.emailOnlySchema }, codes: auth.emailOnlyCodes, responses: { 200: ok('Answered alike whether or not the account exists', message) } }),
  resetPassword: authRoute('post', '/api/auth/reset-password', 'Set a new password with the emailed token', { security: 'public', request: { body: auth.resetPasswordSchema }, responses: { 200: ok('Password updated', message) } }),
  restoreAccount: authRoute('post', '/api/auth/restore-account', 'Cancel a pending account deletion', {
    description: 'During the grace period, with the account\'s e-mail and password (login answers 403 `ERR_USER_004` then). Signs nobody in: log in afterwards.',
    security: 'public',
    request: { body: users.restoreAccountSchema },
    responses: { 200: ok('Restored', message) },
  }),
};

const usersRoute = routeTable('Users');
export const userEndpoints = {
  me: usersRoute('get', '/api/users/me', 'The signed-in user', { security: 'user', responses: { 200: ok('The user', user) } }),
  updateMe: usersRoute('patch', '/api/users/me', 'Update the profile', { security: 'user', request: { body: users.updateMeSchema }, responses: { 200: ok('The updated user', user) } }),
  changePassword: usersRoute('post', '/api/users/me/change-password', 'Change the password (other sessions end)', { security: 'user', browserSession: true, request: { body: users.changePasswordSchema }, responses: { 200: ok('New tokens for this session', session) } }),
  emailPreferences: usersRoute('get', '/api/users/me/email-preferences', 'Which emails the user gets', { security: 'user', responses: { 200: ok('The preferences', EMAIL_PREFERENCES) } }),
  updateEmailPreferences: usersRoute('patch', '/api/users/me/email-preferences', 'Set which emails the user gets', { security: 'user', request: { body: users.emailPreferencesSchema }, responses: { 200: ok('The preferences', EMAIL_PREFERENCES) } }),
  avatar: usersRoute('get', '/api/users/me/avatar', 'The profile picture itself', {
    description: 'The stored image (JPEG, PNG or WebP), from this origin whatever the storage; none: 404 `ERR_USER_010`.',
    security: 'user',
    responses: { 200: { description: 'The picture, with its media type', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  }),
  avatarRequirements: usersRoute('get', '/api/users/me/avatar/requirements', 'What a profile picture may be', { security: 'user', responses: { 200: ok('The accepted formats and the size limit', AVATAR_REQUIREMENTS) } }),
  setAvatar: usersRoute('post', '/api/users/me/avatar', 'Upload a profile picture (base64 or a data URL)', {
    description: 'JPEG, PNG or WebP judged by the bytes (else 400 `ERR_USER_008`), at most `AVATAR_MAX_BYTES` decoded (else 413 `ERR_USER_009`).',
    security: 'user',
    request: { body: users.avatarSchema },
    responses: { 200: ok('The picture\'s URL', AVATAR_UPLOADED) },
  }),
  removeAvatar: usersRoute('delete', '/api/users/me/avatar', 'Remove the profile picture', { security: 'user', responses: { 200: ok('Removed', message) } }),
  exportAccount: usersRoute('get', '/api/users/me/export', 'Export the user\'s data', { security: 'user', responses: { 200: ok('Everything stored about the user', ACCOUNT_EXPORT) } }),
  deleteAccount: usersRoute('delete', '/api/users/me', 'Request account deletion (after a grace period)', { security: 'user', request: { body: users.deleteAccountSchema }, responses: { 200: ok('When the account will be purged', closed({ message: str })) } }),
  twoFactorStatus: usersRoute('get', '/api/users/me/2fa/status', 'Whether two-factor authentication is on', { security: 'user', responses: { 200: ok('The status', TWO_FACTOR_STATUS) } }),
  enableTwoFactor: usersRoute('post', '/api/users/me/2fa/enable', 'Start enabling two-factor authentication', { security: 'user', responses: { 200: ok('The TOTP secret and QR code to confirm with /verify', TWO_FACTOR_SETUP) } }),
  verifyTwoFactor: usersRoute('post', '/api/users/me/2fa/verify', 'Confirm two-factor authentication with a code', { security: 'user', browserSession: true, request: { body: users.twoFactorCodeSchema }, responses: { 200: ok('Enabled; new tokens for this session', TWO_FACTOR_ENABLED) } }),
  disableTwoFactor: usersRoute('post', '/api/users/me/2fa/disable', 'Turn two-factor authentication off', { security: 'user', request: { body: users.disableTwoFactorSchema }, responses: { 200: ok('Disabled', closed({ success: succeeded })) } }),
  backupCodes: usersRoute('post', '/api/users/me/2fa/backup-codes', 'Replace the backup codes', { security: 'user', request: { body: users.passwordOnlySchema }, responses: { 200: ok('The new backup codes', closed({ backupCodes })) } }),
};

const apiKeysRoute = routeTable('API keys');
export const apiKeyEndpoints = {
  create: apiKeysRoute('post', '/api/api-keys', 'Create an API key', {
    description:
      'Project admins only, with a user session. The key (`fm_…`) is shown once. `permissions` omitted: `generate_documents`, `read_documents` and `read_templates`; ' +
      '`manage_gates` (gate configuration), `read_runs` (Flow run payloads), `manage_webhooks` and the reporting flags only when asked for; an object given: the flags it omits are false.',
    security: 'team',
    idempotent: true,
    request: { body: apiKeys.createApiKeySchema, example: { name: 'CI', permissions: { generate_documents: true, read_documents: true } } },
    responses: {
      201: ok('The key, with its secret shown this once', resource('CreatedApiKey')),
    },
  }),
  list: apiKeysRoute('get', '/api/api-keys', 'List API keys', { security: 'team', request: { query: apiKeys.listApiKeysSchema }, responses: { 200: ok('A page of keys', pageOf(resource('ApiKey'))) } }),
  get: apiKeysRoute('get', '/api/api-keys/:id', 'Get an API key', { security: 'team', request: { params: id }, responses: { 200: ok('The key', resource('ApiKey')) } }),
  update: apiKeysRoute('patch', '/api/api-keys/:id', 'Rename, re-permission or (de)activate an API key', { security: 'team', request: { params: id, body: apiKeys.updateApiKeySchema }, responses: { 200: ok('The key', resource('ApiKey')) } }),
  revoke: apiKeysRoute('post', '/api/api-keys/:id/revoke', 'Revoke an API key', {
    description: 'The next request with the key is refused (401 `ERR_AKEY_003`). `PATCH` with `isActive: true` reactivates it.',
    security: 'team',
    request: { params: id },
    responses: { 200: ok('The revoked key', resource('RevokedApiKey')) },
  }),
  stats: apiKeysRoute('get', '/api/api-keys/:id/stats', 'Usage of an API key', { security: 'team', request: { params: id }, responses: { 200: ok('Request counts', resource('ApiKeyStats')) } }),
  delete: apiKeysRoute('delete', '/api/api-keys/:id', 'Delete an API key', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
};

const teamsRoute = routeTable('Teams');
export const teamEndpoints = {
  members: teamsRoute('get', '/api/teams/members', 'Members of the team', { description: 'Any member, viewers included; the oldest member (the owner) first.', security: 'team', responses: { 200: ok('The members', listOf(resource('Member'))) } }),
  invite: teamsRoute('post', '/api/teams/members/invite', 'Invite someone by email', { description: 'Owners and admins.', security: 'team', request: { body: teams.inviteSchema }, codes: teams.inviteCodes, responses: { 201: ok('The invitation', resource('Invitation')) } }),
  cancelInvitation: teamsRoute('delete', '/api/teams/members/:id/invitation', 'Withdraw an invitation', { description: 'The owner; `:id` is the invitation\'s id.', security: 'team', request: { params: id }, responses: { 200: ok('Withdrawn', message) } }),
  removeMember: teamsRoute('delete', '/api/teams/members/:id', 'Remove a member', { description: 'The owner; `:id` is the member\'s user id.', security: 'team', request: { params: id }, responses: { 200: ok('Removed', message) } }),
  changeRole: teamsRoute('patch', '/api/teams/members/:id/role', 'Change a member\'s role', { description: 'The owner; `:id` is the member\'s user id.', security: 'team', request: { params: id, body: teams.roleSchema }, responses: { 200: ok('The member', resource('Member')) } }),
  invitations: teamsRoute('get', '/api/teams/invitations', 'Open invitations of the team', { description: 'Owners and admins: pending, unexpired, newest first.', security: 'team', responses: { 200: ok('The invitations', listOf(resource('Invitation'))) } }),
  invitationByLink: teamsRoute('get', '/api/teams/invitations/:id', 'The invitation behind an e-mailed link', {
    description:
      'For whoever holds the link, signed in or not: `token` is the token of the e-mailed link. Changes nothing. A wrong token, or an invitation unknown, answered, withdrawn or of a deleted project: 404 `ERR_TEAM_009`; expired: 410 `ERR_TEAM_010`.',
    security: 'public',
    request: { params: id, query: teams.invitationLinkQuerySchema },
    responses: { 200: ok('The invitation', resource('InvitationByLink')) },
  }),
  myInvitations: teamsRoute('get', '/api/teams/invitations/my', 'Invitations addressed to the signed-in user', {
    description: 'Pending, unexpired invitations to the caller\'s address; a verified address only (403 `ERR_AUTH_006`).',
    security: 'user',
    responses: { 200: ok('The invitations', listOf(resource('MyInvitation'))) },
  }),
  acceptInvitation: teamsRoute('post', '/api/teams/invitations/:id/accept', 'Accept an invitation', {
    description: 'Needs a verified account with the invited address and `token`, the token of the e-mailed link (missing or wrong: 400 `ERR_AUTH_007`).',
    security: 'user',
    request: { params: id, body: teams.decideInvitationSchema },
    responses: { 200: ok('Joined', message) },
  }),
  rejectInvitation: teamsRoute('post', '/api/teams/invitations/:id/reject', 'Decline an invitation', {
    description: 'With the e-mailed `token`, or without it from a verified account with the invited address.',
    security: 'user',
    request: { params: id, body: teams.decideInvitationSchema },
    responses: { 200: ok('Declined', message) },
  }),
  activity: teamsRoute('get', '/api/teams/activity', 'Recent activity in the team', {
    description: 'Newest first, paged with `page` and `limit` (default 50, at most 100); every member reads it.',
    security: 'team',
    request: { query: teams.activityQuerySchema },
    responses: { 200: ok('A page of activity entries', pageOf(resource('ActivityEntry'))) },
  }),
  create: teamsRoute('post', '/api/teams', 'Create a team', { security: 'user', request: { body: teams.createTeamSchema }, responses: { 201: ok('The team', resource('CreatedProject')) } }),
  list: teamsRoute('get', '/api/teams', 'Teams of the signed-in user', { security: 'user', responses: { 200: ok('The teams, with the user\'s role in each', listOf(resource('Project'))) } }),
  get: teamsRoute('get', '/api/teams/:id', 'Get a team', { security: 'user', request: { params: id }, responses: { 200: ok('The team', resource('Project')) } }),
  update: teamsRoute('put', '/api/teams/:id', 'Rename a team (owner)', { security: 'user', request: { params: id, body: teams.updateTeamSchema }, responses: { 200: ok('The team', resource('Project')) } }),
  delete: teamsRoute('delete', '/api/teams/:id', 'Delete a team (owner)', { security: 'user', request: { params: id }, responses: { 200: ok('Deleted', message) } }),
};

const pagesRoute = routeTable('Pages');
export const pageEndpoints = {
  invitationLink: pagesRoute('get', '/invitations/:id', 'Invitation link: the dashboard\'s page', {
    description: 'The link in invitation e-mails. The dashboard\'s page (HTML) when it is built, which links to `/no-script/invitations/:id` for browsers without script; else that page itself. Opening it changes nothing.',
    security: 'public',
    request: { params: { id: 'Invitation id' } },
    responses: { 200: html('The page to accept or decline') },
  }),
  invitationPage: pagesRoute('get', '/no-script/invitations/:id', 'Invitation page without script (HTML)', { security: 'public', request: { params: { id: 'Invitation id' } }, responses: { 200: html('The page to accept or decline') } }),
  answerInvitation: pagesRoute('post', '/invitations/:id', 'Answer an invitation from its page without script (form post)', { security: 'public', request: { params: { id: 'Invitation id' }, bodyType: 'form', bodyDescription: 'The page\'s form fields' }, responses: { 200: html('The outcome') } }),
  verifyEmailLink: pagesRoute('get', '/verify-email', 'Verification link: the dashboard\'s page', {
    description: 'The link in verification e-mails. The dashboard\'s page (HTML) when it is built, which links to `/no-script/verify-email`; else that page itself. Opening it changes nothing.',
    security: 'public',
    responses: { 200: html('The page') },
  }),
  verifyEmailPage: pagesRoute('get', '/no-script/verify-email', 'Email verification page without script (HTML)', { security: 'public', responses: { 200: html('The page') } }),
  verifyEmail: pagesRoute('post', '/verify-email', 'Verify an email address from its page without script (form post)', { security: 'public', request: { bodyType: 'form', bodyDescription: 'The page\'s form fields' }, responses: { 200: html('The outcome') } }),
  resetPasswordLink: pagesRoute('get', '/reset-password', 'Password reset link: the dashboard\'s page', {
    description: 'The link in password-reset e-mails. The dashboard\'s page (HTML) when it is built, which links to `/no-script/reset-password`; else that page itself. Opening it changes nothing.',
    security: 'public',
    responses: { 200: html('The page') },
  }),
  resetPasswordPage: pagesRoute('get', '/no-script/reset-password', 'Password reset page without script (HTML)', { security: 'public', responses: { 200: html('The page') } }),
  resetPassword: pagesRoute('post', '/reset-password', 'Reset a password from its page without script (form post)', { security: 'public', request: { bodyType: 'form', bodyDescription: 'The page\'s form fields' }, responses: { 200: html('The outcome') } }),
};

/** The OpenAPI operations of these routes, in the order of the document (api/openapi/operations.ts). */
export const identityOperations = [authEndpoints, userEndpoints, apiKeyEndpoints, teamEndpoints, pageEndpoints].flatMap(operationsOf);
