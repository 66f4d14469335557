import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type BucketLocationConstraint,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { AppError } from '../../domain/errors';
import {
  assertValidStorageKey,
  contentDisposition,
  type ArtefactStorage,
  type SignedUrl,
  type SignedUrlOptions,
  type StoredObject,
} from './storage';

export interface S3StorageOptions {
  bucket: string;
  /** S3-compatible servers (MinIO, Versity, R2...); unset for AWS itself. */
  endpoint?: string;
  region: string;
  /** Unset: the SDK's default chain (environment, instance profile, ...). */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Injected so tests can presign links that are already expired. */
  now?: () => Date;
}


/** Part size of a streamed upload (S3's smallest part is 5 MiB). */
const STREAM_PART_BYTES = 8 * 1024 * 1024;
/** AWS caps presigned URLs at seven days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * Artefacts in an S3 bucket, downloaded through presigned GET URLs. The bucket is expected to
 * exist; `ensureBucket()` creates it for development and tests, never implicitly, because
 * production credentials should not need (or have) the right to create buckets.
 */
export class S3Storage implements ArtefactStorage {
  readonly bucket: string;
  readonly client: S3Client;
  private readonly now: () => Date;
  private readonly region: string;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.region = options.region;
    this.now = options.now ?? (() => new Date());
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
      // Recent SDKs add CRC checksums to every request by default; several S3-compatible
      // servers reject or ignore them, and TLS plus SigV4 already protect the bytes.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: Buffer | Readable, contentType: string): Promise<void> {
    assertValidStorageKey(key);
    if (!Buffer.isBuffer(body)) {
      // A stream of unknown size (a batch archive as it is written: docs/documents.md "Batch
      // archives") goes up in parts of STREAM_PART_BYTES, a few at once, never whole in memory; a
      // stream shorter than one part is a single PUT. A failing stream aborts the upload.
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: key, Body: body, ContentType: contentType || 'application/octet-stream' },
        partSize: STREAM_PART_BYTES,
        queueSize: 2,
        leavePartsOnError: false,
      });
      // The stream's own error is the answer (a batch archive's byte cap is ERR_OUTPUT_005), not "Upload aborted".
      let failure: unknown;
      body.once('error', (err) => {
        failure = err;
        void upload.abort().catch(() => {});
      });
      try {
        await upload.done();
      } catch (err) {
        throw failure ?? err;
      }
      return;
    }
    // A single PUT needs the length up front.
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        ContentType: contentType || 'application/octet-stream',
      }),
    );
  }

  async get(key: string): Promise<StoredObject> {
    assertValidStorageKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(out.Body instanceof Readable)) throw new Error('S3 GetObject returned no Node.js stream');
      return {
        body: out.Body,
        contentType: out.ContentType ?? 'application/octet-stream',
        size: out.ContentLength ?? 0,
      };
    } catch (err) {
      // A missing bucket is a misconfiguration, not a missing file: let it surface as a failure.
      if (isNotFound(err) && errorName(err) !== 'NoSuchBucket') throw new AppError('ERR_FILE_001', undefined, { key });
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidStorageKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async exists(key: string): Promise<boolean> {
    assertValidStorageKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async signedUrl(key: string, options: SignedUrlOptions): Promise<SignedUrl> {
    assertValidStorageKey(key);
    const ttlSeconds = Math.min(Math.max(1, Math.floor(options.ttlSeconds)), MAX_PRESIGN_SECONDS);
    const signingDate = this.now();
    // SigV4 dates have whole-second precision; the link dies at signing time + X-Amz-Expires.
    signingDate.setMilliseconds(0);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: options.filename ? contentDisposition(options.filename) : undefined,
    });
    const url = await getSignedUrl(this.client, command, { expiresIn: ttlSeconds, signingDate });
    return { url, expiresAt: new Date(signingDate.getTime() + ttlSeconds * 1000) };
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  /** Creates the bucket when it is missing (development and tests; see the class comment). */
  async ensureBucket(): Promise<void> {
    try {
      await this.check();
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await this.client.send(
        new CreateBucketCommand({
          Bucket: this.bucket,
          // us-east-1 is the one region that must not be named as a location constraint.
          CreateBucketConfiguration:
            this.region === 'us-east-1' ? undefined : { LocationConstraint: this.region as BucketLocationConstraint },
        }),
      );
    } catch (err) {
      // Another replica may have created it between our check and our create.
      const name = errorName(err);
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
    }
  }

  /** Releases the client's sockets (tests, shutdown). */
  close(): void {
    this.client.destroy();
  }
}

function errorName(err: unknown): string | undefined {
  return (err as { name?: string } | undefined)?.name;
}

/** HEAD answers carry no body, so a 404 there only shows as `NotFound` or the bare status. */
function isNotFound(err: unknown): boolean {
  const name = errorName(err);
  const status = (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket' || status === 404;
}
