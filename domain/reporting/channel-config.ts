import Joi from 'joi';
import type { ChannelKind, ConflictMode } from './channel-kinds';
import { parseFilenamePattern } from './filename-pattern';
import { MESSAGE_TOKENS, unknownTokens } from './message-text';
import { RESERVED_HEADERS } from '../webhooks/delivery';

/**
 * A channel's `config` and `secrets` per kind (docs/reporting.md "Channels").
 * The API checks them when a channel is saved (400 ERR_CHAN_002 naming every problem); the senders
 * read the stored config through the typed views below. Pure: no I/O, whether a URL may be reached
 * is the outbound guard's call.
 */

const DEFAULT_EMAIL_SUBJECT = '{{report.name}} — {{run.scheduledFor | date}}';
/** Recipients of one e-mail channel, to, cc and bcc together (docs/reporting.md "Limits"). */
const MAX_EMAIL_RECIPIENTS = 50;
/** Slack's own limit on a message's `text`. */
export const MAX_SLACK_TEXT = 3000;
export const MAX_EMAIL_SUBJECT = 300;
const MAX_EMAIL_BODY = 10_000;
export const MAX_TEAMS_TITLE = 200;
export const MAX_TEAMS_TEXT = 3000;
const MAX_WEBHOOK_HEADERS = 20;

export interface EmailChannelConfig {
  to: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
  subject: string;
  body?: string;
  attach: 'files' | 'links';
  /** Attachments' total size after base64, in MiB; past it the mail carries links. */
  maxAttachmentMb: number;
}

export interface SlackChannelConfig {
  text?: string;
}

export interface TeamsChannelConfig {
  title?: string;
  text?: string;
}

export interface WebhookChannelConfig {
  url: string;
  headers?: Record<string, string>;
}

/** What every share kind takes besides its own fields. */
export interface FileShareConfig {
  /** domain/reporting/filename-pattern.ts; absent: the run's file names. */
  filenamePattern?: string;
  conflict: ConflictMode;
}

export interface S3ChannelConfig extends FileShareConfig {
  bucket: string;
  prefix?: string;
  region: string;
  endpoint?: string;
  forcePathStyle?: boolean;
}

export interface SftpChannelConfig extends FileShareConfig {
  host: string;
  port: number;
  username: string;
  directory: string;
  /** `SHA256:` + 43 base64 characters, exactly as `ssh-keygen -l -E sha256` prints it. */
  hostKeySha256: string;
}

export interface WebdavChannelConfig extends FileShareConfig {
  baseUrl: string;
  directory: string;
  username?: string;
  createDirectories: boolean;
}

export interface ChannelConfigs {
  email: EmailChannelConfig;
  slack: SlackChannelConfig;
  teams: TeamsChannelConfig;
  webhook: WebhookChannelConfig;
  s3: S3ChannelConfig;
  sftp: SftpChannelConfig;
  webdav: WebdavChannelConfig;
}

/** The stored config of a channel of `kind`, typed (it was checked when the channel was saved). */
export function channelConfig<K extends ChannelKind>(_kind: K, config: Record<string, unknown>): ChannelConfigs[K] {
  return config as unknown as ChannelConfigs[K];
}

export interface ChannelIssue {
  path: string;
  message: string;
}

/**
 * A rule's refusal. The reason travels in the error's context and is never parsed as a Joi message
 * template (it may quote user input, and Joi templates are expressions).
 */
const rule = (helpers: Joi.CustomHelpers, reason: string) => helpers.error('channel.rule', { reason });

const noBreaks = (what: string) => [/^[^\r\n\0]*$/, `${what} without line breaks`] as const;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const email = Joi.string().trim().lowercase().email({ tlds: false }).max(254);
const recipients = Joi.array().items(email).max(MAX_EMAIL_RECIPIENTS);

/** A text with placeholders: known tokens only (message-text.ts). */
function template(max: number, singleLine: boolean) {
  let s = Joi.string().max(max);
  if (singleLine) s = s.pattern(...noBreaks('a text'));
  return s.custom((value: string, helpers) => {
    const unknown = unknownTokens(value);
    if (unknown.length > 0) return rule(helpers, `unknown placeholder ${unknown.map((t) => `{{${t}}}`).join(', ')} (known: ${MESSAGE_TOKENS.map((t) => `{{${t}}}`).join(', ')})`);
    return value;
  });
}

const httpUrl = Joi.string()
  .trim()
  .max(2048)
  .uri({ scheme: ['http', 'https'] })
  .custom((value: string, helpers) => {
    const url = new URL(value);
    if (url.username || url.password) return rule(helpers, 'must be a URL without user name or password');
    if (url.hash) return rule(helpers, 'must be a URL without a fragment');
    return value;
  });

/** A directory or prefix on a share: no NUL or line breaks, no `..` segment. */
const sharePath = Joi.string()
  .max(1024)
  .pattern(...noBreaks('a path'))
  .custom((value: string, helpers) => (value.split(/[\\/]/).includes('..') ? rule(helpers, "must be a path without '..' segments") : value));

const fileShare = {
  filenamePattern: Joi.string().custom((value: string, helpers) => {
    const parsed = parseFilenamePattern(value);
    return 'error' in parsed ? rule(helpers, parsed.error) : value;
  }),
  conflict: Joi.string().valid('overwrite', 'unique', 'fail').default('unique'),
};

const CONFIG_SCHEMAS: Record<ChannelKind, Joi.ObjectSchema> = {
  email: Joi.object({
    to: recipients.min(1).required(),
    cc: recipients,
    bcc: recipients,
    replyTo: email,
    subject: template(MAX_EMAIL_SUBJECT, true).default(DEFAULT_EMAIL_SUBJECT),
    body: template(MAX_EMAIL_BODY, false),
    attach: Joi.string().valid('files', 'links').default('files'),
    maxAttachmentMb: Joi.number().integer().min(1).max(20).default(10),
  }),
  slack: Joi.object({ text: template(MAX_SLACK_TEXT, false) }),
  teams: Joi.object({ title: template(MAX_TEAMS_TITLE, true), text: template(MAX_TEAMS_TEXT, false) }),
  webhook: Joi.object({
    url: httpUrl.required(),
    headers: Joi.object()
      .pattern(Joi.string().pattern(HEADER_NAME, 'a header name'), Joi.string().max(1000).pattern(...noBreaks('a header value')))
      .max(MAX_WEBHOOK_HEADERS)
      .custom((headers: Record<string, string>, helpers) => {
        const reserved = Object.keys(headers).find((h) => RESERVED_HEADERS.includes(h.toLowerCase()));
        return reserved ? rule(helpers, `'${reserved}' is set by the service`) : headers;
      }),
  }),
  s3: Joi.object({
    bucket: Joi.string()
      .min(3)
      .max(63)
      .pattern(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'an S3 bucket name')
      .required(),
    prefix: sharePath.max(512).allow(''),
    region: Joi.string()
      .pattern(/^[a-z0-9-]{1,50}$/, 'a region name')
      .required(),
    endpoint: httpUrl,
    forcePathStyle: Joi.boolean().strict(),
    ...fileShare,
  }),
  sftp: Joi.object({
    host: Joi.string().trim().hostname().max(253).required(),
    port: Joi.number().integer().min(1).max(65535).default(22),
    username: Joi.string().min(1).max(200).pattern(...noBreaks('a user name')).required(),
    directory: sharePath.min(1).required(),
    hostKeySha256: Joi.string()
      .pattern(/^SHA256:[A-Za-z0-9+/]{43}$/, "'SHA256:' and 43 base64 characters, as ssh-keygen -l prints")
      .required(),
    ...fileShare,
  }),
  webdav: Joi.object({
    baseUrl: httpUrl.custom((value: string, helpers) => (new URL(value).search ? rule(helpers, 'must be a URL without a query') : value)).required(),
    directory: sharePath.allow('').default(''),
    username: Joi.string().max(200).pattern(...noBreaks('a user name')),
    createDirectories: Joi.boolean().strict().default(true),
    ...fileShare,
  }),
};

/** A secret value as a body gives it; `null` (PATCH) clears it. */
const secret = (max: number) => Joi.string().min(1).max(max).pattern(...noBreaks('a value')).allow(null);

/**
 * The secrets a body may set per kind. A webhook's signing `secret` is generated by the service,
 * never given. Chat webhook URLs are http(s) here; the API asks https unless the host is one the
 * operator opened with OUTBOUND_ALLOWLIST.
 */
const SECRET_SCHEMAS: Record<ChannelKind, Joi.ObjectSchema> = {
  email: Joi.object({}),
  slack: Joi.object({ webhookUrl: httpUrl.allow(null) }),
  teams: Joi.object({ webhookUrl: httpUrl.allow(null) }),
  webhook: Joi.object({}),
  s3: Joi.object({ accessKeyId: secret(200), secretAccessKey: secret(500) }),
  sftp: Joi.object({
    password: secret(1000),
    privateKey: Joi.string()
      .max(20_000)
      .pattern(/^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/, 'a PEM or OpenSSH private key')
      .allow(null),
    passphrase: secret(1000),
  }),
  webdav: Joi.object({ password: secret(1000) }),
};

/** At most this many problems are reported (a 10,000-recipient list is one answer, not 10,000). */
const MAX_ISSUES = 20;

/** A secret's problem in words that never quote the value (Joi's pattern messages would). */
function secretMessage(path: string, d: Joi.ValidationErrorItem): string {
  const ctx = d.context ?? {};
  switch (d.type) {
    case 'object.unknown':
      return `'${path}' is not a secret of this kind`;
    case 'string.max':
      return `'${path}' must be at most ${String(ctx.limit)} characters`;
    case 'string.min':
    case 'string.empty':
      return `'${path}' must not be empty`;
    case 'string.uri':
    case 'string.uriCustomScheme':
      return `'${path}' must be an http or https URL`;
    case 'string.pattern.name':
      return `'${path}' must be ${String(ctx.name)}`;
    case 'string.base':
      return `'${path}' must be a string (or null to clear it)`;
    default:
      return `'${path}' is not valid`;
  }
}

function check(schema: Joi.Schema, value: unknown, prefix: string): { value: Record<string, unknown>; issues: ChannelIssue[] } {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    return { value: {}, issues: [{ path: prefix, message: `'${prefix}' must be an object` }] };
  }
  const { value: out, error } = schema.validate(value ?? {}, { abortEarly: false, convert: true, allowUnknown: false });
  const issues = (error?.details ?? []).slice(0, MAX_ISSUES).map((d) => {
    const path = [prefix, ...d.path].join('.');
    if (d.type === 'channel.rule') return { path, message: String(d.context?.reason ?? 'is not valid').slice(0, 300) };
    return { path, message: prefix === 'secrets' ? secretMessage(path, d) : d.message.replace(/"/g, "'").slice(0, 300) };
  });
  return { value: out as Record<string, unknown>, issues };
}

/**
 * A body's `config` (whole) and `secrets` (the ones it sets or clears) for `kind`: defaults
 * applied, every problem listed. Rules across fields: e-mail recipients at most 50 together and
 * each once.
 */
export function checkChannelSettings(
  kind: ChannelKind,
  config: unknown,
  secrets: unknown,
): { config: Record<string, unknown>; secrets: Record<string, string | null>; issues: ChannelIssue[] } {
  const c = check(CONFIG_SCHEMAS[kind], config, 'config');
  const s = check(SECRET_SCHEMAS[kind], secrets, 'secrets');
  const issues = [...c.issues, ...s.issues];
  if (kind === 'email' && c.issues.length === 0) {
    const cfg = c.value as unknown as EmailChannelConfig;
    const all = [...cfg.to, ...(cfg.cc ?? []), ...(cfg.bcc ?? [])];
    if (all.length > MAX_EMAIL_RECIPIENTS) issues.push({ path: 'config', message: `At most ${MAX_EMAIL_RECIPIENTS} recipients in to, cc and bcc together` });
    const seen = new Set<string>();
    for (const address of all) {
      if (seen.has(address)) issues.push({ path: 'config', message: `${address} is named more than once` });
      seen.add(address);
    }
  }
  return { config: c.value, secrets: s.value as Record<string, string | null>, issues: issues.slice(0, MAX_ISSUES) };
}

/** What a channel needs among its stored secrets before it can send (`names`: the secrets it holds). */
export function missingSecrets(kind: ChannelKind, names: readonly string[]): ChannelIssue[] {
  const has = (n: string) => names.includes(n);
  const need = (n: string): ChannelIssue[] => (has(n) ? [] : [{ path: `secrets.${n}`, message: `'secrets.${n}' is required` }]);
  switch (kind) {
    case 'slack':
    case 'teams':
      return need('webhookUrl');
    case 's3':
      return [...need('accessKeyId'), ...need('secretAccessKey')];
    case 'sftp': {
      const issues: ChannelIssue[] = [];
      if (!has('password') && !has('privateKey')) issues.push({ path: 'secrets', message: "'secrets.password' or 'secrets.privateKey' is required" });
      if (has('passphrase') && !has('privateKey')) issues.push({ path: 'secrets.passphrase', message: "'secrets.passphrase' goes with 'secrets.privateKey'" });
      return issues;
    }
    default:
      return [];
  }
}

