import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable, Transform } from 'node:stream';
import type { OutboundGuard } from '../http/outbound';
import type { ChannelContext, ChannelSender, DeliveryFile } from './channel-sender';
import {
  configSecret,
  configText,
  failedTest,
  failureResult,
  guardFailure,
  networkFailure,
  pathSegments,
  permanent,
  retry,
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
 * `s3` channels (docs/reporting.md "File shares", "Channels"): PutObject to `prefix + name` in a
 * bucket of AWS or any S3-compatible endpoint. Every socket the SDK opens resolves its host through
 * the outbound guard (the agent's `lookup`), so it goes to a checked address and a DNS answer that
 * changes between check and connect cannot reach the private network; an IP endpoint is checked
 * before the client is made (Node does not look up IP literals). Only the channel's own keys are
 * used, never the SDK's default chain (the service's environment or instance role).
 */

interface S3ChannelConfig {
  bucket: string;
  /** Key prefix without leading or trailing `/`, or empty. */
  prefix: string;
  region: string;
  endpoint?: URL;
  forcePathStyle: boolean;
}

const CONNECT_TIMEOUT_MS = 10_000;
/** S3 answers to PUT, HEAD and DELETE are small; the SDK reads an error body whole, so a server's is cut here. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
const REQUEST_TIMEOUT_MS = 120_000;
const BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$/;
const REGION = /^[a-z0-9][a-z0-9-]{0,49}$/;

function readConfig(config: Record<string, unknown>): S3ChannelConfig {
  const bucket = configText(config, 'bucket', { max: 255 })!;
  if (!BUCKET.test(bucket)) throw permanent('Channel configuration invalid: bucket is not a bucket name');
  const region = configText(config, 'region', { max: 50 })!;
  if (!REGION.test(region)) throw permanent('Channel configuration invalid: region is not a region name');
  const prefix = pathSegments(configText(config, 'prefix', { optional: true }), 'prefix').join('/');
  const endpointText = configText(config, 'endpoint', { optional: true, max: 2048 });
  let endpoint: URL | undefined;
  if (endpointText !== undefined) {
    try {
      endpoint = new URL(endpointText);
    } catch {
      throw permanent('Channel configuration invalid: endpoint is not a URL');
    }
    if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') throw permanent('Channel configuration invalid: endpoint must be http or https');
    if (endpoint.username || endpoint.password || endpoint.search || endpoint.hash) {
      throw permanent('Channel configuration invalid: endpoint takes no credentials, query or fragment');
    }
  }
  return { bucket, prefix, region, endpoint, forcePathStyle: config.forcePathStyle === true };
}

const keyOf = (config: S3ChannelConfig, name: string) => (config.prefix ? `${config.prefix}/${name}` : name);

/** The agents' lookup: every host name the SDK connects to goes through the guard; the socket gets the checked address. */
function guardedLookup(guard: OutboundGuard): LookupFunction {
  return (hostname, options, callback) => {
    guard.resolveTcp(hostname).then(
      (address) => {
        const family = isIP(address);
        if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

async function makeClient(ctx: ChannelContext, config: S3ChannelConfig): Promise<S3Client> {
  const accessKeyId = configSecret(ctx.secrets, 'accessKeyId');
  const secretAccessKey = configSecret(ctx.secrets, 'secretAccessKey');
  if (!accessKeyId || !secretAccessKey) throw permanent('Channel configuration invalid: the access key id and secret are both needed');
  // Node connects to an IP literal without a lookup: the guard checks it here.
  if (config.endpoint && isIP(config.endpoint.hostname.replace(/^\[(.*)\]$/, '$1'))) await ctx.guard.resolveTcp(config.endpoint.hostname);
  const lookup = guardedLookup(ctx.guard);
  const client = new S3Client({
    endpoint: config.endpoint?.href,
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    // AWS_ENDPOINT_URL* of the service's own environment must not redirect a tenant's channel.
    ignoreConfiguredEndpointUrls: true,
    // The delivery workflow owns retries; a streamed body cannot be sent twice anyway.
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      httpAgent: new HttpAgent({ lookup }),
      httpsAgent: new HttpsAgent({ lookup }),
    },
  });
  // Below the deserializer: the raw response's body is read through a byte cap.
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const response = result.response as { body?: unknown } | undefined;
      if (response && response.body instanceof Readable) response.body = capped(response.body);
      return result;
    },
    { step: 'deserialize', priority: 'low', name: 'formworkResponseCap' },
  );
  return client;
}

/** `body`, ended with an error past MAX_RESPONSE_BYTES (the socket is closed, nothing more is read). */
function capped(body: Readable): Readable {
  let seen = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > MAX_RESPONSE_BYTES) {
        body.destroy();
        callback(permanent('The S3 server answered with more than 1 MB'));
      } else callback(null, chunk);
    },
  });
  body.once('error', (err) => out.destroy(err));
  return body.pipe(out);
}

/** An SDK error as our outcome and words. */
function s3Failure(err: unknown): ShareError {
  // The SDK appends its own lines to an error raised while it reads a body: keep our first line.
  if (err instanceof ShareError) return new ShareError(err.outcome, err.message.split('\n')[0], err.statusCode);
  const known = guardFailure(err);
  if (known) return known;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const name = (err as { name?: string }).name ?? '';
  if (status === undefined || status === 0) return networkFailure(err) ?? retry('S3 endpoint could not be reached');
  if (name === 'NoSuchBucket') return permanent('S3 bucket not found', status);
  if (name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch') return permanent('S3 refused the access key', status);
  if (status === 401 || status === 403) return permanent(`S3 refused the request (${status}): check the keys and the bucket's permissions`, status);
  if (status >= 300 && status < 400) return permanent(`S3 answered ${status}: the bucket may be in another region or need path-style access`, status);
  return new ShareError(statusOutcome(status), `S3 answered ${status}`, status);
}

const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

function writer(client: S3Client, config: S3ChannelConfig, signal?: AbortSignal): ShareWriter {
  const put = async (key: string, file: DeliveryFile, ifNoneMatch: boolean) =>
    client.send(
      new PutObjectCommand({
        Bucket: config.bucket,
        Key: key,
        Body: await file.open(),
        ContentLength: file.bytes,
        ContentType: file.contentType,
        ...(ifNoneMatch ? { IfNoneMatch: '*' } : {}),
      }),
      { abortSignal: signal },
    );
  return {
    async exists(name) {
      try {
        await client.send(new HeadObjectCommand({ Bucket: config.bucket, Key: keyOf(config, name) }), { abortSignal: signal });
        return true;
      } catch (err) {
        if (statusOf(err) === 404) return false;
        throw s3Failure(err);
      }
    },
    async write(name, file, overwrite) {
      const key = keyOf(config, name);
      try {
        await put(key, file, !overwrite);
        return 'written';
      } catch (err) {
        const status = statusOf(err);
        if (status === 412 || status === 409) return 'exists';
        // Servers without conditional writes: the HEAD just before is the check.
        if (!overwrite && status === 501) {
          try {
            await put(key, file, false);
            return 'written';
          } catch (again) {
            throw s3Failure(again);
          }
        }
        throw s3Failure(err);
      }
    },
  };
}

export const s3Sender: ChannelSender = {
  kind: 's3',
  targets(config) {
    const bucket = typeof config.bucket === 'string' ? config.bucket : '';
    const prefix = typeof config.prefix === 'string' ? config.prefix.replace(/^\/+|\/+$/g, '') : '';
    return shareTarget(prefix ? `${bucket}/${prefix}` : bucket);
  },

  async send(ctx, _target, message) {
    let client: S3Client | undefined;
    try {
      const config = readConfig(ctx.config);
      const settings = shareSettings(ctx.config);
      client = await makeClient(ctx, config);
      return await writeAll(writer(client, config, ctx.signal), message, settings, (name) => `${config.bucket}/${keyOf(config, name)}`);
    } catch (err) {
      return failureResult(s3Failure(err), 'S3 upload');
    } finally {
      client?.destroy();
    }
  },

  async test(ctx) {
    let client: S3Client | undefined;
    let key: string | undefined;
    try {
      const config = readConfig(ctx.config);
      key = keyOf(config, testFileName(ctx.channelShortId));
      client = await makeClient(ctx, config);
      await client.send(new PutObjectCommand({ Bucket: config.bucket, Key: key, Body: TEST_FILE_TEXT, ContentType: 'text/plain' }), { abortSignal: ctx.signal });
      await client.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: key }), { abortSignal: ctx.signal });
      return { ok: true, details: { key } };
    } catch (err) {
      return failedTest(s3Failure(err), 'S3 test', key ? { key } : undefined);
    } finally {
      client?.destroy();
    }
  },
};
