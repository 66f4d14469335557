import { buffer as readAll } from 'node:stream/consumers';
import type { ChannelContext, ChannelSender, DeliveryFile } from './channel-sender';
import {
  configSecret,
  configText,
  failedTest,
  failureResult,
  pathSegments,
  permanent,
  shareSettings,
  shareTarget,
  ShareError,
  statusOutcome,
  TEST_FILE_TEXT,
  testFileName,
  writeAll,
  type ShareWriter,
} from './file-share';

/**
 * `webdav` channels (docs/reporting.md "File shares", "Channels"): every request through the outbound
 * guard's fetch, Basic auth when a username is set, MKCOL for each missing parent when
 * `createDirectories`, then PUT. A redirect is not followed but is a permanent failure (the share moved).
 * A file is read into memory first and sent with its length (chunked PUTs are refused by several
 * servers): at most 100 MB (a larger file is a permanent failure naming the cap).
 */

interface WebdavChannelConfig {
  /** The collection files go to, ending in `/`. */
  folder: URL;
  username?: string;
  createDirectories: boolean;
  /** Collections from the base to the folder, each ending in `/`, for MKCOL. */
  parents: URL[];
}

const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;
const UPLOAD_TIMEOUT_MS = 300_000;
const MAX_SEGMENTS = 32;

function readConfig(config: Record<string, unknown>): WebdavChannelConfig {
  const baseText = configText(config, 'baseUrl', { max: 2048 })!;
  let base: URL;
  try {
    base = new URL(baseText);
  } catch {
    throw permanent('Channel configuration invalid: baseUrl is not a URL');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw permanent('Channel configuration invalid: baseUrl must be http or https');
  if (base.username || base.password || base.search || base.hash) throw permanent('Channel configuration invalid: baseUrl takes no credentials, query or fragment');
  // The base's own path is the user's; only what the channel adds is checked and encoded segment by segment.
  if (base.pathname.split('/').some((s) => s === '..' || s.toLowerCase() === '%2e%2e')) throw permanent("Channel configuration invalid: baseUrl must not contain '..'");
  const segments = pathSegments(configText(config, 'directory', { optional: true }), 'directory');
  if (segments.length > MAX_SEGMENTS) throw permanent(`Channel configuration invalid: directory is deeper than ${MAX_SEGMENTS} levels`);
  const root = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  const parents: URL[] = [];
  let path = root;
  for (const segment of segments) {
    path += `${encodeURIComponent(segment)}/`;
    parents.push(new URL(path, base));
  }
  const username = configText(config, 'username', { optional: true, max: 200 });
  return { folder: new URL(path, base), username, createDirectories: config.createDirectories !== false, parents };
}

function fileUrl(config: WebdavChannelConfig, name: string): URL {
  return new URL(encodeURIComponent(name), config.folder);
}

/** A status as our outcome and words. */
function statusFailure(status: number, doing: string): ShareError {
  if (status === 401 || status === 403) return permanent(`WebDAV server refused the credentials or access (${status})`, status);
  if (status >= 300 && status < 400) return permanent(`WebDAV server redirected the request (${status}): use the final URL as baseUrl`, status);
  if (status === 404 || status === 409) return permanent(`WebDAV folder not found while ${doing} (${status})`, status);
  return new ShareError(statusOutcome(status), `WebDAV server answered ${status} while ${doing}`, status);
}

function client(ctx: ChannelContext, config: WebdavChannelConfig) {
  const password = configSecret(ctx.secrets, 'password') ?? '';
  const auth = config.username !== undefined ? `Basic ${Buffer.from(`${config.username}:${password}`).toString('base64')}` : undefined;
  return async (method: string, url: URL, init: { headers?: Record<string, string>; body?: Buffer; timeoutMs?: number } = {}) => {
    const response = await ctx.guard.guardedFetch(url, {
      method,
      headers: { ...(auth ? { authorization: auth } : {}), ...init.headers },
      body: init.body ? new Uint8Array(init.body.buffer as ArrayBuffer, init.body.byteOffset, init.body.length) : undefined,
      signal: ctx.signal,
      timeoutMs: init.timeoutMs ?? REQUEST_TIMEOUT_MS,
      // A 3xx comes back as it is (a failure): a PUT is never sent again elsewhere, credentials never follow.
      followRedirects: false,
    });
    await response.body?.cancel();
    return response.status;
  };
}

/** The file's bytes, refusing a file past the cap before reading it and while it streams. */
async function bytesOf(file: DeliveryFile): Promise<Buffer> {
  if (file.bytes > MAX_UPLOAD_BYTES) throw permanent(`${file.filename} is larger than the 100 MB WebDAV uploads are limited to`);
  const body = await readAll(await file.open());
  if (body.length > MAX_UPLOAD_BYTES) throw permanent(`${file.filename} is larger than the 100 MB WebDAV uploads are limited to`);
  return body;
}

async function ensureFolders(request: ReturnType<typeof client>, config: WebdavChannelConfig): Promise<void> {
  if (!config.createDirectories || config.parents.length === 0) return;
  // Usually the folder exists: one PROPFIND instead of a MKCOL per level (which some servers refuse
  // with 403 on a read-only parent even when the folder below it is there).
  const found = await request('PROPFIND', config.folder, { headers: { depth: '0' } });
  if (found === 207 || found === 200) return;
  if (found !== 404) throw statusFailure(found, 'looking for the folder');
  for (const parent of config.parents) {
    const status = await request('MKCOL', parent);
    // 405: the collection exists already (RFC 4918 9.3.1).
    if (status === 201 || status === 200 || status === 204 || status === 405) continue;
    throw statusFailure(status, 'creating folders');
  }
}

function writer(request: ReturnType<typeof client>, config: WebdavChannelConfig): ShareWriter {
  return {
    async exists(name) {
      const status = await request('HEAD', fileUrl(config, name));
      if (status === 404) return false;
      if (status >= 200 && status < 300) return true;
      throw statusFailure(status, 'checking the name');
    },
    async write(name, file, overwrite) {
      const status = await request('PUT', fileUrl(config, name), {
        body: await bytesOf(file),
        headers: { 'content-type': file.contentType, ...(overwrite ? {} : { 'if-none-match': '*' }) },
        timeoutMs: UPLOAD_TIMEOUT_MS,
      });
      if (status === 412) return 'exists';
      if (status >= 200 && status < 300) return 'written';
      throw statusFailure(status, 'uploading');
    },
  };
}

/** A URL path as shown in records (`%20` → space); the raw path when it is not valid percent-encoding. */
function shownPath(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

const maskedFolder = (config: Record<string, unknown>): string => {
  try {
    const c = readConfig(config);
    return `${c.folder.host}${shownPath(c.folder.pathname)}`;
  } catch {
    return typeof config.baseUrl === 'string' ? config.baseUrl.replace(/^[a-z]+:\/\/([^@/]*@)?/i, '') : '';
  }
};

export const webdavSender: ChannelSender = {
  kind: 'webdav',
  targets: (config) => shareTarget(maskedFolder(config)),

  async send(ctx, _target, message) {
    try {
      const config = readConfig(ctx.config);
      const settings = shareSettings(ctx.config);
      const request = client(ctx, config);
      await ensureFolders(request, config);
      return await writeAll(writer(request, config), message, settings, (name) => shownPath(fileUrl(config, name).pathname));
    } catch (err) {
      return failureResult(err, 'WebDAV upload');
    }
  },

  async test(ctx) {
    try {
      const config = readConfig(ctx.config);
      const request = client(ctx, config);
      await ensureFolders(request, config);
      const url = fileUrl(config, testFileName(ctx.channelShortId));
      const put = await request('PUT', url, { body: Buffer.from(TEST_FILE_TEXT), headers: { 'content-type': 'text/plain' } });
      if (put < 200 || put >= 300) throw statusFailure(put, 'writing the test file');
      const del = await request('DELETE', url);
      if (del !== 404 && (del < 200 || del >= 300)) throw statusFailure(del, 'deleting the test file');
      return { ok: true, details: { path: shownPath(url.pathname) } };
    } catch (err) {
      return failedTest(err, 'WebDAV test');
    }
  },
};
