import { join } from 'node:path';
import type { Config } from '../../domain/config';
import { LocalStorage } from './local-storage';
import { S3Storage } from './s3-storage';

export { LocalStorage } from './local-storage';
export { S3Storage } from './s3-storage';

/** The concrete adapters, so the API can tell whether it must serve `/api/files` itself. */
export type Storage = LocalStorage | S3Storage;

export interface StorageDeps {
  /** Signs local download links; the API and the worker must use the same one. */
  signingSecret: string;
}

/**
 * S3 when S3_BUCKET is set, else files under DATA_DIR/artefacts served by the API through
 * signed links (contract §1). Creating a missing bucket is left to the caller (ensureBucket).
 */
export function createStorage(
  config: Pick<Config, 'storage' | 'dataDir' | 'publicUrl'>,
  deps: StorageDeps,
): Storage {
  const s3 = config.storage.s3;
  if (s3) return new S3Storage(s3);
  return new LocalStorage({
    rootDir: join(config.dataDir, 'artefacts'),
    publicUrl: config.publicUrl,
    signingSecret: deps.signingSecret,
  });
}
