import { availableParallelism, tmpdir } from 'node:os';
import Joi from 'joi';
import { parseRetryDelays } from './webhooks/delivery';
import { decodeKey } from './secret-box';

/**
 * Configuration is read once, at start-up, from the environment. Each area owns a fragment:
 * its variables (validated with Joi) and the typed shape it hands to the code. A bad value stops
 * the process with one line naming the variable (see ConfigError).
 */

const bool = Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off');
const seconds = (dflt: number) => Joi.number().integer().min(0).default(dflt);

const fragments = {
  server: {
    NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
    PORT: Joi.number().port().default(3000),
    HOST: Joi.string().default('0.0.0.0'),
    PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
    DATA_DIR: Joi.string().default('./data'),
    /** Reverse proxies in front of the service: a number of hops, or `true` (1) / `false` (0). */
    TRUST_PROXY: Joi.alternatives().try(Joi.number().integer().min(0).max(32), bool).default(false),
    JSON_BODY_LIMIT: Joi.string().pattern(/^\d+(kb|mb)$/i).default('10mb'),
    LOG_LEVEL: Joi.string().valid('debug', 'info', 'warn', 'error', 'silent').default('info'),
  },
  auth: {
    JWT_SECRET: Joi.string().min(32),
    JWT_TTL_SECONDS: seconds(900),
    REFRESH_TOKEN_TTL_SECONDS: seconds(30 * 24 * 3600),
    EMAIL_TOKEN_TTL_SECONDS: seconds(24 * 3600),
  },
  encryption: {
    /** Base64 of 32 random bytes; checked by loadConfig (encryptionKeys). */
    ENCRYPTION_KEY: Joi.string(),
    /** Comma-separated previous keys, still accepted for decryption during a rotation. */
    ENCRYPTION_KEY_PREVIOUS: Joi.string().allow('').default(''),
  },
  attempts: {
    /** Failed sign-in steps (password, second factor) before exponential back-off starts, per account. */
    AUTH_FAILURES_BEFORE_LOCK: Joi.number().integer().min(1).max(100).default(5),
    /** Reset or verification e-mails one address may ask for before the same back-off applies. */
    AUTH_EMAILS_BEFORE_LOCK: Joi.number().integer().min(1).max(100).default(3),
    AUTH_LOCK_SECONDS: Joi.number().integer().min(1).default(60),
    AUTH_LOCK_MAX_SECONDS: Joi.number().integer().min(1).default(3600),
  },
  database: {
    DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    DATABASE_POOL_SIZE: Joi.number().integer().min(1).default(10),
  },
  temporal: {
    TEMPORAL_ADDRESS: Joi.string().pattern(/^[^:\s]+:\d+$/),
    TEMPORAL_NAMESPACE: Joi.string().default('default'),
    TEMPORAL_CLI_PATH: Joi.string(),
    TEMPORAL_PORT: Joi.number().port().default(7233),
    TEMPORAL_UI_PORT: Joi.number().port().default(8233),
    TEMPORAL_TASK_QUEUE_PREFIX: Joi.string().pattern(/^[a-z0-9-]+$/).default('formwork'),
    /** Temporal Cloud (docs/operations.md): an API key (TLS implied), or mTLS with a client certificate and key. */
    TEMPORAL_API_KEY: Joi.string(),
    TEMPORAL_TLS: Joi.boolean(),
    TEMPORAL_TLS_CERT_PATH: Joi.string(),
    TEMPORAL_TLS_KEY_PATH: Joi.string(),
    TEMPORAL_TLS_CA_PATH: Joi.string(),
    TEMPORAL_TLS_SERVER_NAME: Joi.string(),
    /** Worker Deployment versioning (docs/architecture.md "Changing workflow code"): both set, workers poll as that version. */
    TEMPORAL_WORKER_DEPLOYMENT_NAME: Joi.string(),
    TEMPORAL_WORKER_BUILD_ID: Joi.string(),
    TEMPORAL_WORKER_VERSIONING: Joi.string().valid('auto_upgrade', 'pinned').default('auto_upgrade'),
    /** How long a stopping worker lets its running activities (renders, deliveries) finish before cancelling them. */
    WORKER_SHUTDOWN_GRACE_SECONDS: Joi.number().integer().min(0).max(3600).default(30),
    /** Main-queue activities one worker runs at once: at most DATABASE_POOL_SIZE (mainActivitySlots). */
    WORKER_ACTIVITY_SLOTS: Joi.number().integer().min(1),
    /**
     * Egress-queue activities one worker runs at once (webhook attempts, report deliveries, e-mail, custom
     * render APIs): they wait on other servers, so sized to sockets, not to the database pool.
     */
    EGRESS_ACTIVITY_SLOTS: Joi.number().integer().min(1).max(2000).default(100),
  },
  storage: {
    S3_BUCKET: Joi.string(),
    S3_ENDPOINT: Joi.string().uri(),
    S3_REGION: Joi.string().default('us-east-1'),
    S3_ACCESS_KEY_ID: Joi.string(),
    S3_SECRET_ACCESS_KEY: Joi.string(),
    S3_FORCE_PATH_STYLE: bool.default(true),
    DOWNLOAD_URL_TTL_SECONDS: Joi.number().integer().min(1).default(3600),
  },
  mail: {
    SMTP_URL: Joi.string().uri({ scheme: ['smtp', 'smtps'] }),
    MAIL_FROM: Joi.string().default('Formwork <no-reply@formwork.local>'),
  },
  limits: {
    REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }),
    RATE_LIMIT_API_KEY: Joi.number().integer().min(1).default(100),
    RATE_LIMIT_OAUTH: Joi.number().integer().min(1).default(120),
    RATE_LIMIT_JWT: Joi.number().integer().min(1).default(200),
    RATE_LIMIT_ANONYMOUS: Joi.number().integer().min(1).default(30),
    RATE_LIMIT_FILE_LINKS: Joi.number().integer().min(1).default(3000),
  },
  outbound: {
    OUTBOUND_ALLOWLIST: Joi.string().allow('').default(''),
  },
  webhooks: {
    /** Parsed by loadConfig (parseRetryDelays); tests shorten the delays. */
    WEBHOOK_RETRY_DELAYS: Joi.string().default('30s,2m,10m'),
  },
  browser: {
    PUPPETEER_EXECUTABLE_PATH: Joi.string(),
  },
  documents: {
    FREE_DOCUMENTS_PER_MONTH: Joi.number().integer().min(0).default(100),
    DOCUMENT_RETENTION_SECONDS: Joi.number().integer().min(60).default(7 * 24 * 3600),
    BATCH_MAX_DOCUMENTS: Joi.number().integer().min(1).max(10_000).default(5000),
    /** Checks at acceptance (docs/documents.md "Checks at acceptance"): a string, a data: image, the variables as JSON. */
    DOCUMENT_VARIABLE_MAX_CHARS: Joi.number().integer().min(1).default(100_000),
    DOCUMENT_IMAGE_MAX_BYTES: Joi.number().integer().min(1024).default(4 * 1024 * 1024),
    DOCUMENT_VARIABLES_MAX_BYTES: Joi.number().integer().min(1024).default(5 * 1024 * 1024),
    /** A batch's `output.archive` (docs/documents.md "Batch archives"): documents it may hold (default BATCH_MAX_DOCUMENTS) and bytes. */
    BATCH_ARCHIVE_MAX_DOCUMENTS: Joi.number().integer().min(1).max(10_000),
    BATCH_ARCHIVE_MAX_BYTES: Joi.number().integer().min(1024).default(2 * 1024 * 1024 * 1024),
    BATCH_CONCURRENCY: Joi.number().integer().min(1).max(200).default(8),
    BATCH_CHUNK_SIZE: Joi.number().integer().min(1).max(1000).default(250),
    MAINTENANCE_INTERVAL_SECONDS: Joi.number().integer().min(5).default(300),
  },
  teams: {
    INVITATION_TTL_SECONDS: Joi.number().integer().min(1).default(7 * 24 * 3600),
  },
  apiKeys: {
    API_KEY_USAGE_FLUSH_MS: Joi.number().integer().min(10).max(3_600_000).default(5000),
    CREDENTIAL_CACHE_TTL_MS: Joi.number().integer().min(0).max(60_000).default(5000),
  },
  oauth: {
    OAUTH_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).max(24 * 3600).default(3600),
  },
  users: {
    ACCOUNT_DELETION_GRACE_SECONDS: Joi.number().integer().min(1).default(30 * 24 * 3600),
    AVATAR_MAX_BYTES: Joi.number().integer().min(1).default(2 * 1024 * 1024),
  },
  rendering: {
    RENDER_POOL_SIZE: Joi.number().integer().min(1).max(32).default(2),
    RENDER_BROWSER_MAX_DOCUMENTS: Joi.number().integer().min(1).default(1000),
    PDF_MAX_PAGES: Joi.number().integer().min(1).default(200),
    EXCEL_MAX_ROWS: Joi.number().integer().min(1).max(1_048_576).default(100_000),
    LOOP_MAX_ITERATIONS: Joi.number().integer().min(1).default(10_000),
    IMAGE_HOST_ALLOWLIST: Joi.string().allow('').default(''),
    RENDER_HTML_MAX_BYTES: Joi.number().integer().min(1024).default(10 * 1024 * 1024),
    CUSTOM_RENDER_MAX_BYTES: Joi.number().integer().min(1024).default(20 * 1024 * 1024),
    RENDER_OUTPUT_MAX_BYTES: Joi.number().integer().min(1024).default(50 * 1024 * 1024),
    /** The PDF tools' processes (adapters/rendering/pdf-tools/): how many at once (default RENDER_POOL_SIZE), heap and time per step. */
    PDF_TOOLS_CONCURRENCY: Joi.number().integer().min(1).max(32),
    PDF_TOOLS_MAX_HEAP_MB: Joi.number().integer().min(64).max(8192).default(512),
    PDF_TOOLS_TIMEOUT_MS: Joi.number().integer().min(1000).max(600_000).default(120_000),
    /** POST /api/documents/merge: parts of one merge, pages of the merged document (docs/documents.md "Merging and appended PDFs"). */
    MERGE_MAX_PARTS: Joi.number().integer().min(1).max(500).default(50),
    MERGE_MAX_PAGES: Joi.number().integer().min(1).max(100_000).default(1000),
  },
  /** Uploads, output and mail (docs/security.md, "Uploads, output and mail"). */
  abuse: {
    UPLOAD_MAX_BYTES: Joi.number().integer().min(1024).default(10 * 1024 * 1024),
    UPLOAD_FIELDS_MAX_BYTES: Joi.number().integer().min(1024).default(64 * 1024),
    UPLOAD_TMP_DIR: Joi.string(),
    ASSET_PROJECT_MAX_BYTES: Joi.number().integer().min(1024).default(100 * 1024 * 1024),
    ASSET_PROJECT_MAX_COUNT: Joi.number().integer().min(1).default(500),
    PREVIEW_RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(1).default(30),
    PREVIEW_RATE_LIMIT_WINDOW_SECONDS: Joi.number().integer().min(1).default(60),
    RESEND_PER_RECIPIENT_PER_HOUR: Joi.number().integer().min(1).default(5),
    RESEND_PER_PROJECT_PER_HOUR: Joi.number().integer().min(1).default(50),
    REPORT_MAIL_PER_PROJECT_PER_HOUR: Joi.number().integer().min(1).default(500),
  },
  evaluation: {
    EVAL_POOL_SIZE: Joi.number().integer().min(1).max(64).default(availableParallelism()),
    EVAL_TIMEOUT_MS: Joi.number().integer().min(10).max(60_000).default(1000),
    EVAL_MAX_HEAP_MB: Joi.number().integer().min(16).max(4096).default(64),
  },
  /** Reporting queries on the `query` task queue (docs/reporting.md, "Query execution on workers"). */
  reporting: {
    /** System maximum of a query's `timeoutSeconds`. */
    REPORTING_QUERY_TIMEOUT_SECONDS: Joi.number().integer().min(1).max(24 * 3600).default(300),
    REPORTING_MAX_ROWS: Joi.number().integer().min(1).max(10_000_000).default(100_000),
    /** Per dataset, uncompressed NDJSON. */
    REPORTING_RESULT_MAX_BYTES: Joi.number().integer().min(1024).default(50 * 1024 * 1024),
    REPORTING_QUERY_CONCURRENCY: Joi.number().integer().min(1).max(64).default(4),
    /** Datasource tests, schema refreshes and query previews one project may have running at once (429 ERR_LIMIT_015 past it). */
    REPORTING_PROBES_PER_PROJECT: Joi.number().integer().min(1).max(64).default(2),
    /** Model imports read at once per API replica, and waiting beyond those (429 ERR_LIMIT_016 past both). */
    REPORTING_IMPORT_CONCURRENCY: Joi.number().integer().min(1).max(16).default(1),
    REPORTING_IMPORT_QUEUE: Joi.number().integer().min(0).max(100).default(4),
    /** Heap of a process reading a model file (MB): real models need a few; a file that needs more is refused. */
    REPORTING_IMPORT_MAX_HEAP_MB: Joi.number().integer().min(32).max(4096).default(128),
    /** `npm start`: the query worker child's V8 heap limit (--max-old-space-size), in MB. */
    QUERY_WORKER_MAX_HEAP_MB: Joi.number().integer().min(128).max(16384).default(512),
    /** Output files of runs are deleted after this many days; downloads then answer 410 ERR_RPT_012. */
    REPORTING_ARTEFACT_RETENTION_DAYS: Joi.number().integer().min(1).max(3650).default(30),
    /** Run records (and what is left of their files) are deleted after this many days. */
    REPORTING_RUN_RETENTION_DAYS: Joi.number().integer().min(1).max(3650).default(90),
    /** Waits between automatic attempts of a report delivery (like WEBHOOK_RETRY_DELAYS). */
    REPORT_DELIVERY_RETRY_DELAYS: Joi.string().default('30s,2m,10m'),
    /** Lifetime of the signed download links put in e-mails and chat messages (at most the artefact retention). */
    REPORTING_LINK_TTL_HOURS: Joi.number().integer().min(1).max(3650 * 24).default(168),
    /** Shortest time between two fire times of a schedule (ERR_SCHED_003). Tests lower it. */
    REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES: Joi.number().integer().min(0).max(1440).default(5),
    REPORTING_SCHEDULES_PER_PROJECT: Joi.number().integer().min(1).max(100_000).default(100),
    REPORTING_CHANNELS_PER_PROJECT: Joi.number().integer().min(1).max(100_000).default(50),
    /** An agent task nobody leases within this long fails ERR_AGENT_012 (agent offline). */
    REPORTING_AGENT_QUEUE_TIMEOUT_SECONDS: Joi.number().integer().min(5).max(24 * 3600).default(600),
    /**
     * A silent agent times out its query attempt after this long (the activity's heartbeat timeout);
     * agents heartbeat at a third of it (at most every 20 s) and their leases last as long. Tests lower it.
     */
    REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: Joi.number().integer().min(3).max(600).default(60),
    /** The first wait before an agent query attempt that timed out or lost its agent is tried again (then 5×). */
    REPORTING_AGENT_RETRY_DELAY_SECONDS: Joi.number().integer().min(1).max(3600).default(60),
  },
  flowApprovals: {
    /** Length of a "minute" in approval timeouts and digests: tests make it a second. */
    FLOW_MINUTE_MS: Joi.number().integer().min(1).default(60_000),
    FLOW_REVIEW_TOKEN_TTL_SECONDS: Joi.number().integer().min(60).default(3600),
    FLOW_REVIEW_RESEND_PER_10_MINUTES: Joi.number().integer().min(1).default(3),
  },
  /** Starting accepted records' workflows (platform/workflow-outbox.ts, docs/architecture.md "Starting workflows"). */
  outbox: {
    OUTBOX_SWEEP_GRACE_SECONDS: Joi.number().integer().min(0).max(3600).default(30),
    OUTBOX_SWEEP_INTERVAL_SECONDS: Joi.number().integer().min(1).max(3600).default(30),
    /** Test-only: holds every background start this long, a window in which a test kills the API. */
    OUTBOX_START_DELAY_MS: Joi.number().integer().min(0).max(600_000).default(0),
  },
  /** Prometheus endpoints (docs/operations.md "Observing"): never on the public HTTP port. */
  metrics: {
    METRICS_PORT: Joi.number().port(),
    METRICS_HOST: Joi.string().default('127.0.0.1'),
    METRICS_TOKEN: Joi.string().min(16),
    TEMPORAL_METRICS_BIND: Joi.string().pattern(/^[^:\s]+:\d+$/),
  },
};

const schema = Joi.object(Object.assign({}, ...Object.values(fragments))).unknown(true);

/** Every variable the service reads (the README's configuration table lists each one). */
export const CONFIG_VARIABLES: string[] = Object.values(fragments).flatMap((f) => Object.keys(f));

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Activity slots of the main task queue. Nearly every main-queue activity (bookkeeping, deliveries,
 * approvals, report runs) holds one of the process's DATABASE_POOL_SIZE connections while it runs;
 * more slots than connections only queue activities inside the pool, where they wait with their
 * start-to-close timeout running and their retries counting. Default: one slot per connection;
 * asking for more fails at start-up instead of timing activities out under load.
 */
export function mainActivitySlots(poolSize: number, requested?: number): number {
  if (requested === undefined) return poolSize;
  if (requested > poolSize) {
    throw new ConfigError('WORKER_ACTIVITY_SLOTS', `(${requested}) must not exceed DATABASE_POOL_SIZE (${poolSize}): each main-queue activity may hold a database connection`);
  }
  return requested;
}

/** The Temporal connection's TLS settings as file paths (read by platform/temporal.ts), or null for plain gRPC. */
function temporalTls(v: Record<string, unknown>): { certPath?: string; keyPath?: string; caPath?: string; serverName?: string } | null {
  const certPath = v.TEMPORAL_TLS_CERT_PATH as string | undefined;
  const keyPath = v.TEMPORAL_TLS_KEY_PATH as string | undefined;
  if (Boolean(certPath) !== Boolean(keyPath)) throw new ConfigError('TEMPORAL_TLS_CERT_PATH', 'and TEMPORAL_TLS_KEY_PATH go together (mTLS needs both)');
  const on = v.TEMPORAL_TLS === undefined ? Boolean(v.TEMPORAL_API_KEY || certPath || v.TEMPORAL_TLS_CA_PATH) : (v.TEMPORAL_TLS as boolean);
  if (!on) return null;
  return { certPath, keyPath, caPath: v.TEMPORAL_TLS_CA_PATH as string | undefined, serverName: v.TEMPORAL_TLS_SERVER_NAME as string | undefined };
}

export function loadConfig(env: Env = process.env) {
  const { value: v, error } = schema.validate(env, { abortEarly: true, convert: true });
  if (error) {
    const d = error.details[0];
    const variable = String(d.path[0] ?? d.context?.key ?? 'environment');
    throw new ConfigError(variable, d.message.replace(/^"[^"]*"\s*/, ''));
  }
  refusePlaceholders(v);
  const production = v.NODE_ENV === 'production';
  if (production && !v.JWT_SECRET) throw new ConfigError('JWT_SECRET', 'is required in production');
  const encryption = encryptionKeys(v.ENCRYPTION_KEY as string | undefined, v.ENCRYPTION_KEY_PREVIOUS as string);
  if (production && !encryption.key) throw new ConfigError('ENCRYPTION_KEY', 'is required in production (base64 of 32 random bytes: openssl rand -base64 32)');
  // Without SMTP, reset links and magic links would go to the log and DATA_DIR/outbox: development only.
  if (production && !v.SMTP_URL) throw new ConfigError('SMTP_URL', 'is required in production (the log-and-outbox mailer is for development)');
  if (v.S3_BUCKET && Boolean(v.S3_ACCESS_KEY_ID) !== Boolean(v.S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError('S3_SECRET_ACCESS_KEY', 'must be set together with S3_ACCESS_KEY_ID');
  }

  return {
    env: v.NODE_ENV as 'development' | 'production' | 'test',
    production,
    port: v.PORT as number,
    host: v.HOST as string,
    publicUrl: ((v.PUBLIC_URL as string | undefined) ?? `http://localhost:${v.PORT}`).replace(/\/+$/, ''),
    dataDir: v.DATA_DIR as string,
    /** Whether `X-Forwarded-*` is read at all (TRUST_PROXY above 0). */
    trustProxy: proxyHops(v.TRUST_PROXY as number | boolean) > 0,
    /** Trusted proxies in front of the service: the client is this many entries from the right of X-Forwarded-For. */
    proxyHops: proxyHops(v.TRUST_PROXY as number | boolean),
    jsonBodyLimit: v.JSON_BODY_LIMIT as string,
    logLevel: v.LOG_LEVEL as 'debug' | 'info' | 'warn' | 'error' | 'silent',
    auth: {
      /** Unset outside production: generated once and kept under DATA_DIR. */
      jwtSecret: v.JWT_SECRET as string | undefined,
      jwtTtlSeconds: v.JWT_TTL_SECONDS as number,
      refreshTokenTtlSeconds: v.REFRESH_TOKEN_TTL_SECONDS as number,
      emailTokenTtlSeconds: v.EMAIL_TOKEN_TTL_SECONDS as number,
    },
    metrics: {
      /** Unset: this role serves no /metrics. */
      port: v.METRICS_PORT as number | undefined,
      host: v.METRICS_HOST as string,
      /** Set: /metrics answers only `Authorization: Bearer <token>`. */
      token: v.METRICS_TOKEN as string | undefined,
      /** `host:port` where the Temporal SDK's Core serves its own metrics (worker roles); unset: none. */
      temporalBind: v.TEMPORAL_METRICS_BIND as string | undefined,
    },
    encryption: {
      /** Base64 of the 32-byte AES-256-GCM key of secrets at rest; unset outside production: generated once and kept under DATA_DIR. */
      key: encryption.key,
      /** Keys that only decrypt (a rotation in progress: `npm run admin -- rotate-encryption-key`). */
      previousKeys: encryption.previousKeys,
    },
    attempts: {
      failuresBeforeLock: v.AUTH_FAILURES_BEFORE_LOCK as number,
      emailsBeforeLock: v.AUTH_EMAILS_BEFORE_LOCK as number,
      /** First lock; each further failure doubles it, up to maxLockSeconds. */
      lockSeconds: v.AUTH_LOCK_SECONDS as number,
      maxLockSeconds: Math.max(v.AUTH_LOCK_MAX_SECONDS as number, v.AUTH_LOCK_SECONDS as number),
    },
    database: {
      /** Unset: an embedded Postgres-compatible store under DATA_DIR (npm start only). */
      url: v.DATABASE_URL as string | undefined,
      poolSize: v.DATABASE_POOL_SIZE as number,
    },
    temporal: {
      /** Unset: npm start launches the Temporal CLI dev server. */
      address: v.TEMPORAL_ADDRESS as string | undefined,
      /** Workers' shutdownGraceTime: running activities get this long to finish on SIGTERM, then are cancelled (and retried elsewhere). */
      shutdownGraceSeconds: v.WORKER_SHUTDOWN_GRACE_SECONDS as number,
      /** maxConcurrentActivityTaskExecutions of the main queue, sized to the database pool. */
      mainActivitySlots: mainActivitySlots(v.DATABASE_POOL_SIZE as number, v.WORKER_ACTIVITY_SLOTS as number | undefined),
      /** maxConcurrentActivityTaskExecutions of the egress queue (EGRESS_ACTIVITY_SLOTS). */
      egressActivitySlots: v.EGRESS_ACTIVITY_SLOTS as number,
      namespace: v.TEMPORAL_NAMESPACE as string,
      cliPath: v.TEMPORAL_CLI_PATH as string | undefined,
      port: v.TEMPORAL_PORT as number,
      uiPort: v.TEMPORAL_UI_PORT as number,
      taskQueuePrefix: v.TEMPORAL_TASK_QUEUE_PREFIX as string,
      apiKey: v.TEMPORAL_API_KEY as string | undefined,
      /** TLS: on with an API key or a client certificate unless TEMPORAL_TLS=false says otherwise. */
      tls: temporalTls(v),
      /** Worker Deployment versioning; null: unversioned workers (development, tests). */
      deployment:
        v.TEMPORAL_WORKER_DEPLOYMENT_NAME && v.TEMPORAL_WORKER_BUILD_ID
          ? { deploymentName: v.TEMPORAL_WORKER_DEPLOYMENT_NAME as string, buildId: v.TEMPORAL_WORKER_BUILD_ID as string, behavior: v.TEMPORAL_WORKER_VERSIONING as 'auto_upgrade' | 'pinned' }
          : null,
    },
    storage: {
      s3: v.S3_BUCKET
        ? {
            bucket: v.S3_BUCKET as string,
            endpoint: v.S3_ENDPOINT as string | undefined,
            region: v.S3_REGION as string,
            accessKeyId: v.S3_ACCESS_KEY_ID as string | undefined,
            secretAccessKey: v.S3_SECRET_ACCESS_KEY as string | undefined,
            forcePathStyle: v.S3_FORCE_PATH_STYLE as boolean,
          }
        : undefined,
      downloadUrlTtlSeconds: v.DOWNLOAD_URL_TTL_SECONDS as number,
    },
    mail: {
      smtpUrl: v.SMTP_URL as string | undefined,
      from: v.MAIL_FROM as string,
    },
    limits: {
      redisUrl: v.REDIS_URL as string | undefined,
      perMinute: {
        apiKey: v.RATE_LIMIT_API_KEY as number,
        oauth: v.RATE_LIMIT_OAUTH as number,
        jwt: v.RATE_LIMIT_JWT as number,
        anonymous: v.RATE_LIMIT_ANONYMOUS as number,
        fileLinks: v.RATE_LIMIT_FILE_LINKS as number,
      },
    },
    outbound: {
      allowlist: (v.OUTBOUND_ALLOWLIST as string).split(',').map((s) => s.trim()).filter(Boolean),
    },
    webhooks: {
      /** Waits before each webhook retry (spec: 30 s, 2 min, 10 min); at most 3, so at most 4 attempts. */
      retryDelaysMs: retryDelays(v.WEBHOOK_RETRY_DELAYS as string),
    },
    browser: {
      executablePath: v.PUPPETEER_EXECUTABLE_PATH as string | undefined,
    },
    documents: {
      freeDocumentsPerMonth: v.FREE_DOCUMENTS_PER_MONTH as number,
      /** Artefacts older than this are removed by the maintenance schedule. */
      retentionSeconds: v.DOCUMENT_RETENTION_SECONDS as number,
      batchMaxDocuments: v.BATCH_MAX_DOCUMENTS as number,
      /** What a document's variables may hold when it is asked for (domain/documents/acceptance.ts). */
      variables: {
        maxVariableChars: v.DOCUMENT_VARIABLE_MAX_CHARS as number,
        maxImageChars: v.DOCUMENT_IMAGE_MAX_BYTES as number,
        maxVariablesBytes: v.DOCUMENT_VARIABLES_MAX_BYTES as number,
      },
      /** A batch's archive: more documents are refused at acceptance, more bytes fail the archive (ERR_OUTPUT_005). */
      archive: {
        maxDocuments: (v.BATCH_ARCHIVE_MAX_DOCUMENTS as number | undefined) ?? (v.BATCH_MAX_DOCUMENTS as number),
        maxBytes: v.BATCH_ARCHIVE_MAX_BYTES as number,
      },
      /** Documents of one batch rendering at once (bounded further by the render workers). */
      batchConcurrency: v.BATCH_CONCURRENCY as number,
      /** Documents a batch workflow run lists and handles before it continues as new (history size). */
      batchChunkSize: v.BATCH_CHUNK_SIZE as number,
      /** How often the maintenance schedule runs (retention, stranded jobs). */
      maintenanceIntervalSeconds: v.MAINTENANCE_INTERVAL_SECONDS as number,
    },
    teams: {
      /** How long an e-mailed project invitation can be accepted (default 7 days). */
      invitationTtlSeconds: v.INVITATION_TTL_SECONDS as number,
    },
    apiKeys: {
      /** How often buffered API-key usage is written (api/identity/api-key-usage.ts); stats trail by this much. */
      usageFlushMs: v.API_KEY_USAGE_FLUSH_MS as number,
      /**
       * How long an API process uses a working API key or OAuth token it resolved without reading the
       * database again (api/identity/credential-cache.ts); changes evict it at once. 0: read every call.
       */
      credentialCacheTtlMs: v.CREDENTIAL_CACHE_TTL_MS as number,
    },
    oauth: {
      /** Lifetime of an OAuth access token (`expires_in`; docs/oauth.md). */
      tokenTtlSeconds: v.OAUTH_TOKEN_TTL_SECONDS as number,
    },
    users: {
      /** How long a deleted account stays restorable before it is purged (spec: 30 days). */
      deletionGraceSeconds: v.ACCOUNT_DELETION_GRACE_SECONDS as number,
      /** Largest avatar accepted, in decoded bytes. */
      avatarMaxBytes: v.AVATAR_MAX_BYTES as number,
    },
    rendering: {
      /** Pages rendered at once by one process's Chromium (its concurrency bound). */
      poolSize: v.RENDER_POOL_SIZE as number,
      /** Documents after which the browser is replaced, bounding leaks in a long-lived Chromium. */
      browserMaxDocuments: v.RENDER_BROWSER_MAX_DOCUMENTS as number,
      limits: {
        maxPdfPages: v.PDF_MAX_PAGES as number,
        maxExcelRows: v.EXCEL_MAX_ROWS as number,
        maxLoopIterations: v.LOOP_MAX_ITERATIONS as number,
      },
      /** Hosts whose http(s) images templates may show (`cdn.example.com`, `*.example.com`, `host:port`). */
      imageHostAllowlist: (v.IMAGE_HOST_ALLOWLIST as string).split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
      /** Largest HTML a template may produce before it reaches Chromium (ERR_LIMIT_009). */
      maxHtmlBytes: v.RENDER_HTML_MAX_BYTES as number,
      /** Largest response a Flow gate's custom render API may send, read with this cap while it streams (ERR_LIMIT_010). */
      maxCustomRenderBytes: v.CUSTOM_RENDER_MAX_BYTES as number,
      /** Largest rendered file (PDF or XLSX bytes) a preview or a generation may produce (ERR_LIMIT_011). */
      maxOutputBytes: v.RENDER_OUTPUT_MAX_BYTES as number,
      /** The PDF tools' processes: finishing steps of `output` (docs/documents.md "Output options"). */
      pdfTools: {
        concurrency: (v.PDF_TOOLS_CONCURRENCY as number | undefined) ?? (v.RENDER_POOL_SIZE as number),
        maxHeapMb: v.PDF_TOOLS_MAX_HEAP_MB as number,
        timeoutMs: v.PDF_TOOLS_TIMEOUT_MS as number,
      },
      /** POST /api/documents/merge: parts per request (ERR_OUTPUT_005 at once) and pages of the merged document (the job fails with ERR_OUTPUT_005). */
      merge: {
        maxParts: v.MERGE_MAX_PARTS as number,
        maxPages: v.MERGE_MAX_PAGES as number,
      },
    },
    uploads: {
      /** Largest uploaded file, and largest total of files, in one multipart request (413 ERR_REQ_002). */
      maxFileBytes: v.UPLOAD_MAX_BYTES as number,
      /** Largest total of a multipart form's text fields (413 ERR_REQ_002). */
      maxFieldsBytes: v.UPLOAD_FIELDS_MAX_BYTES as number,
      /** Where a request's upload lives until the request ends (then it is deleted). */
      tmpDir: (v.UPLOAD_TMP_DIR as string | undefined) ?? tmpdir(),
    },
    assets: {
      /** Bytes of images and fonts one project may hold (409 ERR_ASSET_004). */
      projectMaxBytes: v.ASSET_PROJECT_MAX_BYTES as number,
      /** Images and fonts one project may hold (409 ERR_ASSET_004). */
      projectMaxCount: v.ASSET_PROJECT_MAX_COUNT as number,
    },
    mailAbuse: {
      /** Template previews per project and minute (429 ERR_LIMIT_014). */
      previewsPerMinute: v.PREVIEW_RATE_LIMIT_PER_MINUTE as number,
      /** The window those previews are counted in: a minute; a test lengthens it so a slow machine cannot reopen it mid-test. */
      previewWindowSeconds: v.PREVIEW_RATE_LIMIT_WINDOW_SECONDS as number,
      /** Approval-link and verification re-sends one address may receive per hour (429 ERR_LIMIT_012). */
      resendsPerRecipientPerHour: v.RESEND_PER_RECIPIENT_PER_HOUR as number,
      /** Approval-link re-sends one project may trigger per hour (429 ERR_LIMIT_013). */
      resendsPerProjectPerHour: v.RESEND_PER_PROJECT_PER_HOUR as number,
      /** Report-delivery e-mails (one per recipient) one project may send per hour; past it an attempt waits (docs/security.md). */
      reportMailsPerProjectPerHour: v.REPORT_MAIL_PER_PROJECT_PER_HOUR as number,
    },
    evaluation: {
      /** Worker threads that evaluate user expressions and patterns (docs/security.md). */
      poolSize: v.EVAL_POOL_SIZE as number,
      /** One budget for all the user expressions of one request: a validation, or one document's calculated variables. */
      timeoutMs: v.EVAL_TIMEOUT_MS as number,
      /** Heap of each evaluation thread; a thread that exceeds it is replaced. */
      maxHeapMb: v.EVAL_MAX_HEAP_MB as number,
    },
    reporting: {
      /** Largest `timeoutSeconds` a query may ask for; the statement's deadline on the database. */
      queryTimeoutSeconds: v.REPORTING_QUERY_TIMEOUT_SECONDS as number,
      /** Largest `maxRows` a query may ask for. */
      maxRows: v.REPORTING_MAX_ROWS as number,
      /** Largest uncompressed NDJSON result of one dataset (ERR_QRY_010). */
      resultMaxBytes: v.REPORTING_RESULT_MAX_BYTES as number,
      /** Query activities one worker runs at once (slots of the `query` task queue). */
      queryConcurrency: v.REPORTING_QUERY_CONCURRENCY as number,
      /** Probes (tests, schema refreshes, previews) one project may have running at once, across API replicas when REDIS_URL is set. */
      probesPerProject: v.REPORTING_PROBES_PER_PROJECT as number,
      /** Model imports: processes per replica, queue, heap (MB) and time per file (adapters/evaluation/import-pool.ts). */
      imports: {
        concurrency: v.REPORTING_IMPORT_CONCURRENCY as number,
        queue: v.REPORTING_IMPORT_QUEUE as number,
        maxHeapMb: v.REPORTING_IMPORT_MAX_HEAP_MB as number,
        timeoutMs: 30_000,
      },
      /** `npm start`'s query worker child: its heap limit in MB. */
      queryWorkerMaxHeapMb: v.QUERY_WORKER_MAX_HEAP_MB as number,
      /** Days a run's output files are kept (downloads after it: 410 ERR_RPT_012). */
      artefactRetentionDays: v.REPORTING_ARTEFACT_RETENTION_DAYS as number,
      /** Days a run record is kept. */
      runRetentionDays: v.REPORTING_RUN_RETENTION_DAYS as number,
      /** Waits between automatic attempts of a report delivery (REPORT_DELIVERY_RETRY_DELAYS). */
      deliveryRetryDelaysMs: retryDelays(v.REPORT_DELIVERY_RETRY_DELAYS as string, 'REPORT_DELIVERY_RETRY_DELAYS'),
      /** Lifetime of signed links in e-mails and chat messages, in seconds (at most the artefact retention). */
      linkTtlSeconds: Math.min(v.REPORTING_LINK_TTL_HOURS as number, (v.REPORTING_ARTEFACT_RETENTION_DAYS as number) * 24) * 3600,
      /** Shortest time between two fire times of a schedule, in minutes (ERR_SCHED_003). */
      scheduleMinIntervalMinutes: v.REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES as number,
      schedulesPerProject: v.REPORTING_SCHEDULES_PER_PROJECT as number,
      channelsPerProject: v.REPORTING_CHANNELS_PER_PROJECT as number,
      /** Agents (docs/reporting.md "Agents"): queue timeout (ERR_AGENT_012), heartbeat timeout and the first retry wait, in seconds. */
      agentQueueTimeoutSeconds: v.REPORTING_AGENT_QUEUE_TIMEOUT_SECONDS as number,
      agentHeartbeatTimeoutSeconds: v.REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS as number,
      agentRetryDelaySeconds: v.REPORTING_AGENT_RETRY_DELAY_SECONDS as number,
    },
    flowApprovals: {
      /** Milliseconds in a gate's `timeoutMinutes` and `notificationDigestMinutes` (60,000 outside tests). */
      minuteMs: v.FLOW_MINUTE_MS as number,
      /** Lifetime of an external approver's review token (also capped by the approval window). */
      reviewTokenTtlSeconds: v.FLOW_REVIEW_TOKEN_TTL_SECONDS as number,
      /** Magic-link re-sends one e-mail may ask for per 10 minutes (POST /api/flow/review/resend). */
      reviewResendPer10Minutes: v.FLOW_REVIEW_RESEND_PER_10_MINUTES as number,
    },
    outbox: {
      /** A mark older than this is a worker sweep's to start (the API's own start normally clears it within a second). */
      sweepGraceMs: (v.OUTBOX_SWEEP_GRACE_SECONDS as number) * 1000,
      /** How often each main worker sweeps. */
      sweepIntervalMs: (v.OUTBOX_SWEEP_INTERVAL_SECONDS as number) * 1000,
      /** Test-only (0 in production): the wait before each background start. */
      startDelayMs: v.OUTBOX_START_DELAY_MS as number,
    },
  };
}

export type Config = ReturnType<typeof loadConfig>;

function encryptionKeys(key: string | undefined, previous: string): { key: string | undefined; previousKeys: string[] } {
  if (key !== undefined && !decodeKey(key)) throw new ConfigError('ENCRYPTION_KEY', 'must be the base64 of exactly 32 bytes (openssl rand -base64 32)');
  const previousKeys = previous.split(',').map((s) => s.trim()).filter(Boolean);
  for (const k of previousKeys) {
    if (!decodeKey(k)) throw new ConfigError('ENCRYPTION_KEY_PREVIOUS', 'must be a comma-separated list of base64 32-byte keys');
  }
  return { key: key?.trim(), previousKeys };
}

/** `true` is one proxy (the usual single load balancer or ingress), `false` none. */
function proxyHops(value: number | boolean): number {
  return value === true ? 1 : value === false ? 0 : value;
}

/** Secrets and credentials that must never hold an example value (docs/security.md, "Deployment"). */
const PLACEHOLDER_CHECKED = ['JWT_SECRET', 'ENCRYPTION_KEY', 'ENCRYPTION_KEY_PREVIOUS', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const;

/**
 * The values example files show (the old docker-compose.yml defaults, MinIO's well-known root
 * login) and the usual "fill me in" words. A deployment that copied one has no secret at all, so
 * the process refuses to start, in every environment.
 */
const PLACEHOLDER_WORDS = /change[-_ ]?(it|me|this)|replace[-_ ]?me|placeholder|your[-_ ]?(own[-_ ]?)?(secret|key|password)|^<.*>$|^\.\.\.$/i;
const PLACEHOLDER_VALUES = new Set(['secret', 'password', 'passw0rd', 'minioadmin', 'formwork', 'formwork-secret', 'admin', 'root', 'test', 'example', 'default', 'xxx', 'todo']);

function refusePlaceholders(v: Record<string, unknown>): void {
  for (const name of PLACEHOLDER_CHECKED) {
    const value = v[name];
    if (typeof value !== 'string' || value === '') continue;
    for (const part of value.split(',').map((s) => s.trim())) {
      if (PLACEHOLDER_WORDS.test(part) || PLACEHOLDER_VALUES.has(part.toLowerCase())) {
        throw new ConfigError(name, 'holds a placeholder value from an example: set a random secret of your own');
      }
    }
  }
}

function retryDelays(text: string, name = 'WEBHOOK_RETRY_DELAYS'): number[] {
  try {
    return parseRetryDelays(text);
  } catch (err) {
    throw new ConfigError(name, (err as Error).message);
  }
}
