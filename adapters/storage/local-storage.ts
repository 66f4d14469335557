import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../domain/errors';
import { signUrlPath, verifySignedUrl } from '../../domain/signing';
import {
  assertValidStorageKey,
  isValidStorageKey,
  keyBasename,
  type ArtefactStorage,
  type SignedUrl,
  type SignedUrlOptions,
  type StoredObject,
} from './storage';

/** Where the API serves local artefacts (api/storage/storage.routes.ts). */
export const FILES_ROUTE_PREFIX = '/api/files';

export interface LocalStorageOptions {
  /** Usually `DATA_DIR/artefacts`. */
  rootDir: string;
  /** Base of the download links, e.g. `https://formwork.example.com`. */
  publicUrl: string;
  /** HMAC key of the download links; every API replica must share it. */
  signingSecret: string;
  /** Injected so tests can mint links that are already expired. */
  now?: () => Date;
}

/** What a download link proved: the name to save the file under. */
export interface VerifiedDownload {
  filename: string;
}

interface Metadata {
  contentType: string;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * Artefacts as plain files: `<root>/<key>` holds the bytes, `<root>/.meta/<key>.json` the
 * content type. Storage keys never have segments starting with a dot, so `.meta` and `.tmp`
 * cannot collide with an artefact. Writes go to `.tmp` and are renamed into place, so a reader
 * never sees half a document.
 */
export class LocalStorage implements ArtefactStorage {
  readonly rootDir: string;
  private readonly publicUrl: string;
  private readonly signingSecret: string;
  private readonly now: () => Date;

  constructor(options: LocalStorageOptions) {
    if (!options.signingSecret) throw new TypeError('LocalStorage needs a signing secret');
    this.rootDir = resolve(options.rootDir);
    this.publicUrl = options.publicUrl.replace(/\/+$/, '');
    this.signingSecret = options.signingSecret;
    this.now = options.now ?? (() => new Date());
  }

  async put(key: string, body: Buffer | Readable, contentType: string): Promise<void> {
    const target = this.dataPath(key);
    const tmpDir = join(this.rootDir, '.tmp');
    const tmp = join(tmpDir, randomUUID());
    await mkdir(tmpDir, { recursive: true });
    try {
      if (Buffer.isBuffer(body)) await writeFile(tmp, body);
      else await pipeline(body, createWriteStream(tmp));
      const meta: Metadata = { contentType: contentType || DEFAULT_CONTENT_TYPE };
      const metaPath = this.metaPath(key);
      await mkdir(dirname(metaPath), { recursive: true });
      // Metadata first: once the bytes are visible under the key, their content type is too.
      await writeFile(metaPath, JSON.stringify(meta));
      await mkdir(dirname(target), { recursive: true });
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<StoredObject> {
    const path = this.dataPath(key);
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) throw new AppError('ERR_FILE_001', undefined, { key });
      throw err;
    }
    try {
      // Size from the open handle, not a separate stat: a concurrent overwrite renames a new
      // file into place, and the handle keeps reading the old one consistently.
      const info = await handle.stat();
      if (!info.isFile()) throw new AppError('ERR_FILE_001', undefined, { key });
      const contentType = await this.readContentType(key);
      return { body: handle.createReadStream(), contentType, size: info.size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.dataPath(key), { force: true });
    await rm(this.metaPath(key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.dataPath(key))).isFile();
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async signedUrl(key: string, options: SignedUrlOptions): Promise<SignedUrl> {
    assertValidStorageKey(key);
    const expiresAt = new Date(this.now().getTime() + options.ttlSeconds * 1000);
    // Whole seconds, like the `expires` query value, so the reported expiry is the real one.
    expiresAt.setMilliseconds(0);
    const signed = signUrlPath(this.signingSecret, `${FILES_ROUTE_PREFIX}/${key}`, {
      expiresAt,
      filename: options.filename,
    });
    return { url: `${this.publicUrl}${signed}`, expiresAt };
  }

  /**
   * Checks a download link's query for `key` (decoded, as the router hands it over).
   * Throws ERR_FILE_003 for a forged or edited link, ERR_FILE_002 for an expired one.
   */
  verifyDownload(key: string, query: Record<string, unknown>): VerifiedDownload {
    const result = isValidStorageKey(key)
      ? verifySignedUrl(this.signingSecret, `${FILES_ROUTE_PREFIX}/${key}`, query, this.now())
      : ({ ok: false, reason: 'invalid' } as const);
    if (!result.ok) throw new AppError(result.reason === 'expired' ? 'ERR_FILE_002' : 'ERR_FILE_003');
    return { filename: result.filename ?? keyBasename(key) };
  }

  async check(): Promise<void> {
    const probe = join(this.rootDir, '.tmp', `health-${randomUUID()}`);
    await mkdir(dirname(probe), { recursive: true });
    await writeFile(probe, 'ok');
    try {
      if ((await readFile(probe, 'utf8')) !== 'ok') throw new Error('Artefact directory read back wrong bytes');
    } finally {
      await rm(probe, { force: true });
    }
  }

  private async readContentType(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(this.metaPath(key), 'utf8')) as Partial<Metadata>;
      return typeof meta.contentType === 'string' && meta.contentType ? meta.contentType : DEFAULT_CONTENT_TYPE;
    } catch (err) {
      if (isMissing(err)) return DEFAULT_CONTENT_TYPE;
      throw err;
    }
  }

  private dataPath(key: string): string {
    assertValidStorageKey(key);
    return inside(this.rootDir, key);
  }

  private metaPath(key: string): string {
    assertValidStorageKey(key);
    return inside(join(this.rootDir, '.meta'), `${key}.json`);
  }
}

/** Key validation already forbids traversal; this guards against a future change of that rule. */
function inside(base: string, relative: string): string {
  const path = resolve(base, relative);
  if (!path.startsWith(base + sep)) throw new TypeError(`Storage key escapes its directory: ${relative}`);
  return path;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

