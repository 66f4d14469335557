import type { ChannelTarget, ConflictMode } from '../../domain/reporting/channel-kinds';
import { parseFilenamePattern, renderFilename, sanitizeFilename } from '../../domain/reporting/filename-pattern';
import type { DeliveryFile, DeliveryMessage, SendResult, TestResult } from './channel-sender';

/**
 * What the three file-share senders (s3, sftp, webdav; docs/reporting.md "Channels") have in common: the
 * remote name of each file, a directory or prefix that cannot be left with `..`, the conflict modes
 * (`unique` appends -1, -2, … before the extension like SSRS AutoIncrement; `overwrite`; `fail`), and
 * one rule for outcomes: an unreachable or overloaded server is retried, a refusal (credentials, host
 * key, 4xx, a taken name) is permanent. Errors are in our words, never a server's text.
 */

/** How many numbered names `unique` tries before giving up (`report-1.pdf` … `report-100.pdf`). */
const MAX_UNIQUE_TRIES = 100;
const MAX_STEM = 120;
const MAX_PATH = 1024;
const MAX_REMOTE_REF = 2000;
const EXTENSIONS: Record<DeliveryFile['format'], string> = { pdf: 'pdf', excel: 'xlsx', csv: 'csv' };
const CONFLICT_MODES: readonly ConflictMode[] = ['overwrite', 'unique', 'fail'];

/** A failure a share sender recognised: what the workflow should do with it, in our words. */
export class ShareError extends Error {
  constructor(
    readonly outcome: 'retry' | 'permanent',
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
    this.name = 'ShareError';
  }
}

export const permanent = (message: string, statusCode?: number) => new ShareError('permanent', message, statusCode);
export const retry = (message: string, statusCode?: number) => new ShareError('retry', message, statusCode);

/** An HTTP status (S3, WebDAV) as an outcome: overloaded or failing servers are retried, every other refusal is final. */
export function statusOutcome(status: number): 'retry' | 'permanent' {
  return status >= 500 || status === 429 || status === 408 ? 'retry' : 'permanent';
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** A connection-level failure (refused, reset, timed out), looking through `cause`: worth another attempt. */
export function networkFailure(err: unknown): ShareError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    const { code: own, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (name === 'TimeoutError' || name === 'AbortError') return retry('The server did not answer in time');
    // Some libraries wrap a socket error into a new one that keeps only its message (`connect ECONNREFUSED …`).
    const code = typeof own === 'string' ? own : typeof message === 'string' ? /\b(E[A-Z_]{4,20})\b/.exec(message)?.[1] : undefined;
    if (code && NETWORK_CODES.has(code)) {
      return retry(code === 'ECONNREFUSED' ? 'Connection refused' : `Connection failed (${code})`);
    }
  }
  return undefined;
}

/** A refusal by the outbound guard (private address not allow-listed, unresolvable host), if `err` is one. */
export function guardFailure(err: unknown): ShareError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    // By code, not class: an SDK may re-wrap it, or see it from another realm.
    if ((e as { code?: unknown }).code === 'ERR_OUTBOUND_001') return permanent((e as Error).message || 'Outbound address not allowed');
  }
  return undefined;
}

/** Any error as a SendResult: recognised failures keep their outcome; anything else is retried under a neutral message. */
export function failureResult(err: unknown, what: string): SendResult {
  const known = err instanceof ShareError ? err : (guardFailure(err) ?? networkFailure(err));
  if (known) return { outcome: known.outcome, error: known.message, ...(known.statusCode ? { statusCode: known.statusCode } : {}) };
  return { outcome: 'retry', error: `${what} failed unexpectedly` };
}

/** A test's failure with the same words as a delivery's. */
export function failedTest(err: unknown, what: string, details?: Record<string, unknown>): TestResult {
  const { error } = failureResult(err, what);
  return { ok: false, error, ...(details ? { details } : {}) };
}

// ---- config read defensively (the API validates at save; a stored row is still checked here) ----

/** A string field of the config: trimmed, capped, required unless `optional`. */
export function configText(config: Record<string, unknown>, field: string, options: { optional?: boolean; max?: number } = {}): string | undefined {
  const value = config[field];
  if (value === undefined || value === null || value === '') {
    if (options.optional) return undefined;
    throw permanent(`Channel configuration invalid: ${field} is missing`);
  }
  if (typeof value !== 'string') throw permanent(`Channel configuration invalid: ${field} must be text`);
  if (value.length > (options.max ?? MAX_PATH)) throw permanent(`Channel configuration invalid: ${field} is longer than ${options.max ?? MAX_PATH} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw permanent(`Channel configuration invalid: ${field} contains control characters`);
  return value.trim();
}

export function configSecret(secrets: Record<string, string>, name: string): string | undefined {
  const value = secrets[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export interface ShareSettings {
  filenamePattern?: string;
  conflict: ConflictMode;
}

/** `filenamePattern` and `conflict` (default `unique`) of a share channel. */
export function shareSettings(config: Record<string, unknown>): ShareSettings {
  const filenamePattern = configText(config, 'filenamePattern', { optional: true, max: 200 });
  if (filenamePattern !== undefined) {
    const parsed = parseFilenamePattern(filenamePattern);
    if ('error' in parsed) throw permanent(`Channel configuration invalid: filenamePattern: ${parsed.error}`);
  }
  const conflict = config.conflict ?? 'unique';
  if (!CONFLICT_MODES.includes(conflict as ConflictMode)) throw permanent('Channel configuration invalid: conflict must be overwrite, unique or fail');
  return { filenamePattern, conflict: conflict as ConflictMode };
}

/**
 * The segments of a directory or prefix: empty and `.` segments dropped, `..` and backslashes
 * refused (a share's folder is where files go, never a way out of it).
 */
export function pathSegments(value: string | undefined, field: string): string[] {
  if (!value) return [];
  if (value.includes('\\')) throw permanent(`Channel configuration invalid: ${field} must use '/' as separator`);
  const segments = value.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw permanent(`Channel configuration invalid: ${field} must not contain '..'`);
  return segments;
}

/** The one target of a share, shown as host + path (no credentials). */
export function shareTarget(masked: string): ChannelTarget[] {
  return [{ key: 'default', masked: masked.slice(0, 300) }];
}

// ---- names ----

/** Stem and extension of a name's last path segment (a stored name has none; a hostile one may). */
function splitName(filename: string): { stem: string; ext: string } {
  const base = filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? { stem: base.slice(0, dot), ext: base.slice(dot + 1) } : { stem: base, ext: '' };
}

/**
 * What tells apart files that get one pattern's name: their own names without the part they all
 * share (cut back to a separator), e.g. `sales-2026-01-05-orders` and `…-items` → `orders`, `items`.
 */
function distinguishing(stems: string[]): string[] {
  let common = stems[0];
  for (const s of stems) while (!s.startsWith(common)) common = common.slice(0, -1);
  const cut = Math.max(common.lastIndexOf('-'), common.lastIndexOf('_'), common.lastIndexOf('.'));
  const prefix = common.slice(0, cut + 1);
  return stems.map((s) => s.slice(prefix.length) || s);
}

export interface RemoteFile {
  file: DeliveryFile;
  /** A single path segment: `[A-Za-z0-9._-]`, no leading dot, with its extension. */
  name: string;
}

/**
 * The name each file gets on the share: its own (stored) name, or the channel's `filenamePattern`
 * rendered for the run, with a suffix from the file's own name when several files share a format
 * (a CSV per dataset, a job's bundle). Names are unique within the message whatever their case.
 */
export function remoteFiles(message: DeliveryMessage, settings: ShareSettings): RemoteFile[] {
  let rendered: string | undefined;
  if (settings.filenamePattern !== undefined) {
    const scheduledFor = new Date(message.run.scheduledFor);
    if (Number.isNaN(scheduledFor.getTime())) throw permanent('The run has no valid scheduled time for the file name');
    try {
      rendered = renderFilename(settings.filenamePattern, {
        slug: message.report.slug ?? sanitizeFilename(message.report.name),
        name: message.report.name,
        runShortId: message.run.shortId,
        scheduledFor,
        timezone: message.run.timezone,
        params: message.run.parameters ?? {},
      });
    } catch {
      throw permanent('The channel file name pattern could not be rendered for this run');
    }
  }
  const suffixes = new Map<DeliveryFile, string>();
  if (rendered !== undefined) {
    for (const format of new Set(message.files.map((f) => f.format))) {
      const same = message.files.filter((f) => f.format === format);
      if (same.length < 2) continue;
      const parts = distinguishing(same.map((f) => sanitizeFilename(splitName(f.filename).stem)));
      same.forEach((f, i) => suffixes.set(f, sanitizeFilename(parts[i])));
    }
  }
  const taken = new Set<string>();
  return message.files.map((file) => {
    const ext = EXTENSIONS[file.format] ?? sanitizeFilename(splitName(file.filename).ext || 'bin');
    let stem: string;
    if (rendered === undefined) stem = sanitizeFilename(splitName(file.filename).stem);
    else {
      const suffix = suffixes.get(file);
      stem = suffix ? sanitizeFilename(`${rendered.slice(0, Math.max(1, MAX_STEM - suffix.length - 1))}-${suffix}`) : rendered;
    }
    let name = `${stem}.${ext}`;
    for (let n = 2; taken.has(name.toLowerCase()); n += 1) name = `${stem}-${n}.${ext}`;
    taken.add(name.toLowerCase());
    return { file, name };
  });
}

/** `report.pdf` → `report-3.pdf` (SSRS AutoIncrement). */
function numberedName(name: string, n: number): string {
  const { stem, ext } = splitName(name);
  return ext ? `${stem}-${n}.${ext}` : `${stem}-${n}`;
}

/** One protocol's writes, by name relative to the channel's folder. */
export interface ShareWriter {
  exists(name: string): Promise<boolean>;
  /**
   * Writes the file under `name`. With `overwrite` false, answers `exists` instead of replacing a
   * file (checked by the server where it can, else just before).
   */
  write(name: string, file: DeliveryFile, overwrite: boolean): Promise<'written' | 'exists'>;
}

/** Writes one file by the conflict mode; the name it got. */
async function place(writer: ShareWriter, remote: RemoteFile, mode: ConflictMode): Promise<string> {
  if (mode === 'overwrite') {
    await writer.write(remote.name, remote.file, true);
    return remote.name;
  }
  if (mode === 'fail') {
    if ((await writer.exists(remote.name)) || (await writer.write(remote.name, remote.file, false)) === 'exists') {
      throw permanent(`File exists: ${remote.name}`);
    }
    return remote.name;
  }
  for (let n = 0; n <= MAX_UNIQUE_TRIES; n += 1) {
    const candidate = n === 0 ? remote.name : numberedName(remote.name, n);
    if (await writer.exists(candidate)) continue;
    if ((await writer.write(candidate, remote.file, false)) === 'written') return candidate;
  }
  throw permanent(`No free name for ${remote.name} after ${MAX_UNIQUE_TRIES} numbered tries`);
}

/**
 * Writes every file of the message; the names they got (`remoteRef`, joined to `where`). A failure
 * stops at that file: files written before it stay (a retry writes all files again).
 */
export async function writeAll(writer: ShareWriter, message: DeliveryMessage, settings: ShareSettings, where: (name: string) => string): Promise<SendResult> {
  const files = remoteFiles(message, settings);
  if (files.length === 0) throw permanent('The delivery has no files');
  const written: string[] = [];
  for (const remote of files) written.push(where(await place(writer, remote, settings.conflict)));
  return { outcome: 'delivered', remoteRef: written.join(', ').slice(0, MAX_REMOTE_REF) };
}

/** The file `test` writes and deletes. */
export function testFileName(channelShortId: string): string {
  return `formwork-test-${sanitizeFilename(channelShortId)}.txt`;
}

export const TEST_FILE_TEXT = 'Formwork channel test: this file is deleted right after it is written.\n';
