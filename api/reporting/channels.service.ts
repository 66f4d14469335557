import { isDeepStrictEqual } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { isUniqueViolation } from '../../db/sql';
import { assertSavedTarget, isInternalAddress, type OutboundGuard, type SavedTarget } from '../../adapters/http/outbound';
import { ChannelEntity, type ChannelLastTest } from '../../db/reporting/channel.entity';
import { channelUsage } from '../../db/reporting/channel-usage';
import type { DatasourceSecrets } from '../../db/reporting/datasource.entity';
import { AppError } from '../../domain/errors';
import { roleAtLeast, type Role } from '../../domain/identity/roles';
import { checkChannelSettings, missingSecrets, type ChannelIssue } from '../../domain/reporting/channel-config';
import { MEMBER_CHANNEL_KINDS, type ChannelKind } from '../../domain/reporting/channel-kinds';
import { randomBase62 } from '../../domain/signing';
import type { ChannelTestOutcome, ChannelTestTarget } from '../../adapters/channels/channel-tests';
import { requireVerifiedSender } from '../middleware/verified-sender';
import { consumeOrRefuse, type ResendLimiters } from '../rate-limits';
import type { CreateChannelInput, ListChannelsQuery, UpdateChannelInput } from './channels.schema';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Distribution channels (docs/reporting.md "Channels"). Every lookup is
 * `(project_id, id)`: another project's channel answers ERR_CHAN_001. Members manage e-mail
 * channels, admins every kind (the others hold secrets). Secrets are write-only and encrypted at
 * rest by the entity's column transformer; a webhook channel's signing secret is generated here
 * and shown once, in the create answer.
 */

export interface ChannelDeps {
  db: DataSource;
  /** Checks target URLs when saved and carries the test message (no redirects, OUTBOUND_ALLOWLIST). */
  guard: OutboundGuard;
  /** OUTBOUND_ALLOWLIST as configured: a chat webhook URL may be plain http only for a host named there. */
  outboundAllowlist: string[];
  /** Sends a kind's test message in this process (adapters/channels/channel-tests.ts). */
  runTest: (target: ChannelTestTarget) => Promise<ChannelTestOutcome>;
  /** REPORTING_CHANNELS_PER_PROJECT. */
  channelsPerProject: number;
  /** Flow's re-send budgets (api/rate-limits.ts): an e-mail channel's test spends them too. */
  mailLimits: ResendLimiters;
}

export interface ChannelCaller {
  projectId: string;
  userId?: string;
  role?: Role;
}

const SHORT_ID_PREFIX = 'rch_';
const ERROR_MESSAGE_MAX = 300;
const DETAILS_MAX = 4000;

function invalid(errors: ChannelIssue[]): AppError {
  return new AppError('ERR_CHAN_002', `Channel configuration invalid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`.slice(0, 1000), { errors });
}

function nameTaken(name: string): AppError {
  return new AppError('ERR_CHAN_003', `A channel named '${name}' exists in this project`, { field: 'name' });
}

/** Members manage e-mail channels; the other kinds hold secrets and need an admin (docs/reporting.md "Access"). */
function assertMayManage(caller: ChannelCaller, kind: ChannelKind): void {
  if (MEMBER_CHANNEL_KINDS.includes(kind)) return;
  const role = caller.role ?? 'viewer';
  if (!roleAtLeast(role, 'admin')) {
    throw new AppError('ERR_AUTH_005', `Managing ${kind} channels needs an admin (they hold secrets)`, { required: 'admin', granted: role });
  }
}

/**
 * No open relay (docs/security.md "Reporting channels: verified senders, budgets, header secrets"):
 * naming the recipients of an e-mail channel, and testing one, needs a verified account behind
 * the call, as Flow gates do (403 ERR_AUTH_006).
 */
async function assertMaySendMail(deps: Pick<ChannelDeps, 'db'>, caller: ChannelCaller, kind: ChannelKind, what: string): Promise<void> {
  if (kind === 'email') await requireVerifiedSender(deps.db, caller, what);
}

/** Where a channel test's mail goes: the signed-in caller, or for an API key the project owner. */
async function callerAddress(deps: Pick<ChannelDeps, 'db'>, caller: ChannelCaller): Promise<string> {
  const [row]: Array<{ email: string }> = caller.userId
    ? await deps.db.query(`SELECT email FROM users WHERE id = $1`, [caller.userId])
    : await deps.db.query(`SELECT u.email FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.id = $1`, [caller.projectId]);
  if (!row) throw new AppError('ERR_AUTH_006', 'No verified address to send the test message to', { required: caller.userId ? 'caller' : 'project_owner' });
  return row.email;
}

/** `whsec_` + 32 base62 characters, like webhook subscriptions. */
const newWebhookSecret = () => `whsec_${randomBase62(32)}`;

/** Stored secrets with the given ones applied: a string replaces, null clears, a missing name keeps. */
function applySecrets(stored: DatasourceSecrets, given: Record<string, string | null>, now: Date): DatasourceSecrets {
  const out = { ...stored };
  for (const [name, value] of Object.entries(given)) {
    if (value === null) delete out[name];
    else out[name] = { value, updatedAt: now.toISOString() };
  }
  return out;
}

/**
 * A chat webhook URL: reachable for the outbound guard (ERR_OUTBOUND_001 otherwise), and https
 * unless its host is one the operator opened with OUTBOUND_ALLOWLIST (a private address, or a
 * name listed there): Slack and Teams URLs are credentials and never travel in clear elsewhere.
 */
async function checkChatUrl(deps: ChannelDeps, url: string): Promise<void> {
  const { url: parsed, addresses } = await deps.guard.assertAllowed(url);
  if (parsed.protocol === 'https:') return;
  const host = parsed.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const listed = deps.outboundAllowlist.some((e) => e.trim().toLowerCase() === host);
  // Internal addresses passed the guard only because OUTBOUND_ALLOWLIST opened them.
  const internal = addresses.every((a) => isInternalAddress(a));
  if (!listed && !internal) throw invalid([{ path: 'secrets.webhookUrl', message: "'secrets.webhookUrl' must use https" }]);
}

/** `{"set": true}`: what answers show for a stored header value, and what a body sends back to keep it. */
const isSetMarker = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && (v as { set?: unknown }).set === true;

/** The stored value of header `name` (header names are case-insensitive). */
function storedHeader(stored: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(stored).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : stored[key];
}

/**
 * A webhook config as given, with each header value `{"set": true}` replaced by the stored value of
 * that header, and `headers` left out (on update) replaced by the stored headers. Answers the names
 * whose values were kept rather than given, and the markers nothing is stored behind.
 */
function withStoredHeaders(config: unknown, stored: Record<string, string> | undefined): { config: unknown; kept: string[]; issues: ChannelIssue[] } {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { config, kept: [], issues: [] };
  const given = config as Record<string, unknown>;
  if (!('headers' in given)) {
    if (!stored || Object.keys(stored).length === 0) return { config, kept: [], issues: [] };
    return { config: { ...given, headers: { ...stored } }, kept: Object.keys(stored), issues: [] };
  }
  const headers = given.headers;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return { config, kept: [], issues: [] };
  const kept: string[] = [];
  const issues: ChannelIssue[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!isSetMarker(value)) {
      out[name] = value;
      continue;
    }
    const old = stored ? storedHeader(stored, name) : undefined;
    if (old === undefined) issues.push({ path: `config.headers.${name}`, message: `'config.headers.${name}' has no stored value to keep: give the value` });
    else {
      out[name] = old;
      kept.push(name);
    }
  }
  return { config: { ...given, headers: out }, kept, issues };
}

const originOf = (url: unknown): string | undefined => {
  try {
    return new URL(String(url)).origin;
  } catch {
    return undefined;
  }
};

/**
 * The target fields that changed between the stored config and the new one (docs/security.md
 * "Reporting channels: verified senders, budgets, header secrets"): a stored secret goes to its
 * target only. SFTP: host, port and the pinned host key (the user name is not a target: the same
 * server gets the secret); WebDAV: baseUrl; webhook: the URL's origin (a path on the same origin
 * is the same receiver).
 */
function changedTarget(kind: ChannelKind, before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const differs = (field: string, norm: (v: unknown) => unknown = (v) => v) => (norm(before[field]) !== norm(after[field]) ? [`config.${field}`] : []);
  switch (kind) {
    case 'sftp':
      return [...differs('host', (v) => String(v).toLowerCase()), ...differs('port', (v) => Number(v ?? 22)), ...differs('hostKeySha256')];
    case 'webdav':
      return differs('baseUrl');
    case 'webhook':
      return originOf(before.url) === originOf(after.url) ? [] : ['config.url'];
    default:
      return [];
  }
}

/**
 * Where a file-share channel connects (docs/reporting.md "File shares"): the S3 endpoint (none: AWS
 * itself), the SFTP host, the WebDAV base URL. Checked by the outbound guard when saved (a new or
 * changed one) and again by the sender before every connection.
 */
function shareTarget(kind: ChannelKind, config: Record<string, unknown>): SavedTarget | undefined {
  if (kind === 's3' && typeof config.endpoint === 'string') return { field: 'config.endpoint', url: config.endpoint };
  if (kind === 'sftp' && typeof config.host === 'string') return { field: 'config.host', host: config.host };
  if (kind === 'webdav' && typeof config.baseUrl === 'string') return { field: 'config.baseUrl', url: config.baseUrl };
  return undefined;
}

/**
 * The config and secrets a save stores: checked per kind (every problem at once), the secrets the
 * channel then holds complete, target URLs allowed by the outbound guard. On update (`previous`), a
 * changed target (changedTarget) keeps no stored secret: each must be given again or cleared (null)
 * in the same request, else 400 ERR_CHAN_005 naming them; a webhook's header values likewise.
 */
async function settings(
  deps: ChannelDeps,
  kind: ChannelKind,
  config: unknown,
  given: unknown,
  stored: DatasourceSecrets,
  previous?: { config: Record<string, unknown> },
) {
  const storedHeaders = kind === 'webhook' && previous ? (previous.config.headers as Record<string, string> | undefined) : undefined;
  const merged = kind === 'webhook' ? withStoredHeaders(config, storedHeaders) : { config, kept: [], issues: [] };
  const checked = checkChannelSettings(kind, merged.config, given ?? {});
  const issues = [...merged.issues, ...checked.issues];
  const now = new Date();
  const secrets = applySecrets(stored, checked.secrets, now);
  if (issues.length === 0) issues.push(...missingSecrets(kind, Object.keys(secrets)));
  if (issues.length > 0) throw invalid(issues);
  if (previous) {
    const changed = changedTarget(kind, previous.config, checked.config);
    if (changed.length > 0) {
      // The webhook's signing secret is the service's and never leaves it (only its HMAC does).
      const notGiven = Object.keys(stored).filter((name) => !(kind === 'webhook' && name === 'secret') && !(name in checked.secrets));
      const fields = [...notGiven.map((n) => `secrets.${n}`), ...merged.kept.map((n) => `config.headers.${n}`)];
      if (fields.length > 0) {
        throw new AppError('ERR_CHAN_005', `${changed.join(', ')} changed: give ${fields.join(', ')} again (or clear it with null) in the same request`, { field: fields[0], fields, changed });
      }
    }
  }
  if ((kind === 'slack' || kind === 'teams') && typeof checked.secrets.webhookUrl === 'string') await checkChatUrl(deps, checked.secrets.webhookUrl);
  if (kind === 'webhook' && checked.config.url !== previous?.config.url) await deps.guard.assertAllowed(String(checked.config.url));
  const share = shareTarget(kind, checked.config);
  if (share && (!previous || !isDeepStrictEqual(share, shareTarget(kind, previous.config)))) await assertSavedTarget(deps.guard, share);
  return { config: checked.config, secrets };
}

export async function createChannel(deps: ChannelDeps, caller: ChannelCaller, input: CreateChannelInput): Promise<{ channel: ChannelEntity; secret?: string }> {
  assertMayManage(caller, input.kind);
  await assertMaySendMail(deps, caller, input.kind, 'creating an e-mail channel');
  const now = new Date();
  const generated = input.kind === 'webhook' ? newWebhookSecret() : undefined;
  const stored: DatasourceSecrets = generated ? { secret: { value: generated, updatedAt: now.toISOString() } } : {};
  const { config, secrets } = await settings(deps, input.kind, input.config, input.secrets, stored);
  const channel = Object.assign(new ChannelEntity(), {
    id: randomUUID(),
    projectId: caller.projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    name: input.name,
    kind: input.kind,
    config,
    secrets,
    isActive: input.isActive ?? true,
    lastTest: null,
    createdBy: caller.userId ?? null,
    createdAt: now,
    updatedAt: now,
  });
  try {
    await deps.db.transaction(async (tx) => {
      // The project row serialises concurrent creations, so the limit holds under a burst.
      await tx.query(`SELECT 1 FROM projects WHERE id = $1 FOR UPDATE`, [caller.projectId]);
      const [{ n }] = await tx.query(`SELECT count(*)::int AS n FROM reporting_channels WHERE project_id = $1`, [caller.projectId]);
      if (n >= deps.channelsPerProject) {
        throw new AppError('ERR_CHAN_002', `A project can have at most ${deps.channelsPerProject} channels (REPORTING_CHANNELS_PER_PROJECT)`, { limit: deps.channelsPerProject });
      }
      await tx.getRepository(ChannelEntity).save(channel);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return { channel, ...(generated ? { secret: generated } : {}) };
}

export async function listChannels(deps: Pick<ChannelDeps, 'db'>, projectId: string, query: ListChannelsQuery): Promise<{ channels: ChannelEntity[]; total: number }> {
  const qb = deps.db.getRepository(ChannelEntity).createQueryBuilder('c').where('c.projectId = :projectId', { projectId });
  if (query.kind) qb.andWhere('c.kind = :kind', { kind: query.kind });
  if (query.isActive !== undefined) qb.andWhere('c.isActive = :isActive', { isActive: query.isActive });
  if (query.search) qb.andWhere(`strpos(lower(c.name), lower(:search)) > 0`, { search: query.search });
  const [channels, total] = await qb
    .orderBy('c.createdAt', 'DESC')
    .addOrderBy('c.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { channels, total };
}

/** A channel of the project by UUID or short id (`rch_…`). */
export async function getChannel(deps: Pick<ChannelDeps, 'db'>, projectId: string, ref: string): Promise<ChannelEntity> {
  const found = await findByIdOrShortId(deps.db, ChannelEntity, projectId, ref, SHORT_ID_PREFIX, 40);
  if (!found) throw new AppError('ERR_CHAN_001');
  return found;
}

/** PATCH: `config` replaces the whole config (checked again); `secrets` sets or (null) clears single secrets. */
export async function updateChannel(deps: ChannelDeps, caller: ChannelCaller, ref: string, patch: UpdateChannelInput): Promise<ChannelEntity> {
  const channel = await getChannel(deps, caller.projectId, ref);
  assertMayManage(caller, channel.kind);
  // New recipients or texts, or a channel switched back on, make the service e-mail them.
  if (patch.config !== undefined || patch.isActive === true) await assertMaySendMail(deps, caller, channel.kind, 'changing or enabling an e-mail channel');
  if (patch.config !== undefined || patch.secrets !== undefined) {
    // The webhook's signing secret is the service's; a body never names it (checkChannelSettings refuses it).
    // Without `config`, the stored one is checked again as is (header values kept; the target is unchanged).
    const { config, secrets } = await settings(deps, channel.kind, patch.config ?? channel.config, patch.secrets, channel.secrets, { config: channel.config });
    channel.config = config;
    channel.secrets = secrets;
  }
  if (patch.name !== undefined) channel.name = patch.name;
  if (patch.isActive !== undefined) channel.isActive = patch.isActive;
  channel.updatedAt = new Date();
  try {
    await deps.db.getRepository(ChannelEntity).save(channel);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(channel.name);
    throw err;
  }
  return channel;
}

/** Hard delete; 409 ERR_CHAN_004 while a live job or a schedule names the channel (db/reporting/channel-usage.ts). */
export async function deleteChannel(deps: Pick<ChannelDeps, 'db'>, caller: ChannelCaller, ref: string): Promise<void> {
  const channel = await getChannel(deps, caller.projectId, ref);
  assertMayManage(caller, channel.kind);
  const usage = await channelUsage(deps.db, caller.projectId, channel.id);
  if (usage.jobs > 0 || usage.schedules > 0) throw new AppError('ERR_CHAN_004', undefined, { ...usage });
  await deps.db.getRepository(ChannelEntity).delete({ id: channel.id, projectId: caller.projectId });
}

/** `text` without any of the secret values. */
function withoutSecrets(text: string, secretValues: string[]): string {
  let out = text;
  for (const s of secretValues) if (s) out = out.split(s).join('***');
  return out;
}

/** What a test's error may say: no secret, cut short. */
function scrub(text: string, secretValues: string[]): string {
  const out = withoutSecrets(text, secretValues);
  return out.length > ERROR_MESSAGE_MAX ? `${out.slice(0, ERROR_MESSAGE_MAX - 1)}…` : out;
}

/** A test's details without secrets; dropped when large (they are a few facts, e.g. a status code or a fingerprint). */
function scrubDetails(details: Record<string, unknown>, secretValues: string[]): Record<string, unknown> | null {
  const text = withoutSecrets(JSON.stringify(details), secretValues);
  if (text.length > DETAILS_MAX) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/**
 * POST …/test: the kind's sender sends its test message (e-mail: one message to the caller, never
 * the channel's recipients; chat: one post; webhook: a signed `report.test` event) with the
 * decrypted secrets and the outbound guard, in this process, within 10 s. An e-mail test needs a
 * verified sender and spends one point of the project's and of the caller's address's re-send
 * budgets (429 ERR_LIMIT_013 / ERR_LIMIT_012). The outcome is the answer (`ok: false` is still
 * 200) and the channel's `lastTest`.
 */
export async function testChannel(deps: ChannelDeps, caller: ChannelCaller, ref: string): Promise<ChannelLastTest> {
  const channel = await getChannel(deps, caller.projectId, ref);
  assertMayManage(caller, channel.kind);
  let testRecipient: string | undefined;
  if (channel.kind === 'email') {
    await assertMaySendMail(deps, caller, channel.kind, 'testing an e-mail channel');
    testRecipient = await callerAddress(deps, caller);
    await consumeOrRefuse(deps.mailLimits.perProject, caller.projectId, 'ERR_LIMIT_013', 'Too many e-mails for this project this hour (RESEND_PER_PROJECT_PER_HOUR); try again later');
    await consumeOrRefuse(deps.mailLimits.perRecipient, testRecipient.toLowerCase(), 'ERR_LIMIT_012', 'Too many e-mails to your address this hour (RESEND_PER_RECIPIENT_PER_HOUR); try again later');
  }
  const headerValues = Object.values((channel.config.headers as Record<string, string> | undefined) ?? {});
  const secretValues = [...Object.values(channel.secrets).map((s) => s.value), ...headerValues];
  const started = performance.now();
  const secrets = Object.fromEntries(Object.entries(channel.secrets).map(([name, s]) => [name, s.value]));
  const result = await deps.runTest({
    kind: channel.kind,
    channelId: channel.id,
    channelShortId: channel.shortId,
    projectId: channel.projectId,
    config: channel.config,
    secrets,
    ...(testRecipient ? { testRecipient } : {}),
  });
  const ok = result.ok;
  const error = result.error ? scrub(result.error, secretValues) : ok ? null : 'The test failed';
  const details = result.details ? scrubDetails(result.details, secretValues) : null;
  const lastTest: ChannelLastTest = { at: new Date().toISOString(), ok, durationMs: Math.round(performance.now() - started), error, details };
  await deps.db.query(`UPDATE reporting_channels SET last_test = $3::jsonb WHERE id = $1 AND project_id = $2`, [channel.id, caller.projectId, JSON.stringify(lastTest)]);
  return lastTest;
}
