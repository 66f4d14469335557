import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from '../../domain/config';

describe('loadConfig', () => {
  it('applies documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.publicUrl).toBe('http://localhost:3000');
    expect(c.dataDir).toBe('./data');
    expect(c.database.url).toBeUndefined();
    expect(c.limits.perMinute).toEqual({ apiKey: 100, oauth: 120, jwt: 200, anonymous: 30, fileLinks: 3000 });
    expect(c.documents.freeDocumentsPerMonth).toBe(100);
    expect(c.rendering).toEqual({
      poolSize: 2,
      browserMaxDocuments: 1000,
      limits: { maxPdfPages: 200, maxExcelRows: 100000, maxLoopIterations: 10000 },
      imageHostAllowlist: [],
      maxHtmlBytes: 10 * 1024 * 1024,
      maxCustomRenderBytes: 20 * 1024 * 1024,
      maxOutputBytes: 50 * 1024 * 1024,
      pdfTools: { concurrency: 2, maxHeapMb: 512, timeoutMs: 120_000 },
      merge: { maxParts: 50, maxPages: 1000 },
    });
    expect(c.uploads).toMatchObject({ maxFileBytes: 10 * 1024 * 1024, maxFieldsBytes: 64 * 1024 });
    expect(c.mailAbuse).toEqual({ previewsPerMinute: 30, previewWindowSeconds: 60, resendsPerRecipientPerHour: 5, resendsPerProjectPerHour: 50, reportMailsPerProjectPerHour: 500 });
    expect(c.evaluation).toEqual({ poolSize: availableParallelism(), timeoutMs: 1000, maxHeapMb: 64 });
    expect(() => loadConfig({ EVAL_TIMEOUT_MS: '5' })).toThrow(/EVAL_TIMEOUT_MS/);
  });

  it('reads the reporting query settings, with their defaults and bounds', () => {
    expect(loadConfig({}).reporting).toEqual({
      queryTimeoutSeconds: 300,
      maxRows: 100_000,
      resultMaxBytes: 50 * 1024 * 1024,
      queryConcurrency: 4,
      probesPerProject: 2,
      imports: { concurrency: 1, queue: 4, maxHeapMb: 128, timeoutMs: 30_000 },
      queryWorkerMaxHeapMb: 512,
      artefactRetentionDays: 30,
      runRetentionDays: 90,
      deliveryRetryDelaysMs: [30_000, 120_000, 600_000],
      linkTtlSeconds: 168 * 3600,
      scheduleMinIntervalMinutes: 5,
      schedulesPerProject: 100,
      channelsPerProject: 50,
      agentQueueTimeoutSeconds: 600,
      agentHeartbeatTimeoutSeconds: 60,
      agentRetryDelaySeconds: 60,
    });
    expect(loadConfig({ REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: '5', REPORTING_AGENT_RETRY_DELAY_SECONDS: '2', REPORTING_AGENT_QUEUE_TIMEOUT_SECONDS: '30' }).reporting).toMatchObject({ agentHeartbeatTimeoutSeconds: 5, agentRetryDelaySeconds: 2, agentQueueTimeoutSeconds: 30 });
    expect(() => loadConfig({ REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: '1' })).toThrow(/^Invalid configuration: REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS /);
    const c = loadConfig({
      REPORTING_QUERY_TIMEOUT_SECONDS: '30',
      REPORTING_MAX_ROWS: '500',
      REPORTING_RESULT_MAX_BYTES: '1048576',
      REPORTING_QUERY_CONCURRENCY: '2',
      REPORTING_ARTEFACT_RETENTION_DAYS: '7',
      REPORTING_RUN_RETENTION_DAYS: '14',
      REPORT_DELIVERY_RETRY_DELAYS: '1s,5s',
      REPORTING_LINK_TTL_HOURS: '1000',
      REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES: '0',
    });
    // Links never outlive the files: 1000 hours is cut to the 7 days of artefact retention.
    expect(c.reporting).toMatchObject({ queryTimeoutSeconds: 30, maxRows: 500, resultMaxBytes: 1048576, queryConcurrency: 2, artefactRetentionDays: 7, runRetentionDays: 14, deliveryRetryDelaysMs: [1000, 5000], linkTtlSeconds: 7 * 86_400, scheduleMinIntervalMinutes: 0 });
    expect(() => loadConfig({ REPORT_DELIVERY_RETRY_DELAYS: '1s,2s,3s,4s' })).toThrow(/^Invalid configuration: REPORT_DELIVERY_RETRY_DELAYS /);
    expect(() => loadConfig({ REPORTING_RUN_RETENTION_DAYS: '0' })).toThrow(/^Invalid configuration: REPORTING_RUN_RETENTION_DAYS /);
    expect(() => loadConfig({ REPORTING_QUERY_TIMEOUT_SECONDS: '0' })).toThrow(/^Invalid configuration: REPORTING_QUERY_TIMEOUT_SECONDS /);
    expect(() => loadConfig({ REPORTING_MAX_ROWS: 'many' })).toThrow(/^Invalid configuration: REPORTING_MAX_ROWS must be a number$/);
    expect(() => loadConfig({ REPORTING_RESULT_MAX_BYTES: '100' })).toThrow(/REPORTING_RESULT_MAX_BYTES/);
    expect(() => loadConfig({ REPORTING_QUERY_CONCURRENCY: '0' })).toThrow(/REPORTING_QUERY_CONCURRENCY/);
  });

  it('names the variable when a value is bad', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^Invalid configuration: PORT must be a number$/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });

  it('requires JWT_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET is required in production/);
  });

  it('requires SMTP_URL in production; development keeps the log-and-outbox mailer', () => {
    // Every other production requirement met, so only the mail setting is missing.
    const production = { NODE_ENV: 'production', JWT_SECRET: 'a3F9kQ2mZ7xW1pR8tY4uV6bN0cL5jH2g', ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/^Invalid configuration: SMTP_URL is required in production/);
    expect(loadConfig({ ...production, SMTP_URL: 'smtps://u:p@mail.example.com:465' }).mail.smtpUrl).toBe('smtps://u:p@mail.example.com:465');
    expect(loadConfig({ NODE_ENV: 'development' }).mail.smtpUrl).toBeUndefined();
  });

  it('refuses placeholder secrets and credentials from the examples, in every environment', () => {
    // The value docker-compose.yml used to default to, and the usual example words.
    const refused: Array<[string, string]> = [
      ['JWT_SECRET', 'change-me-to-a-long-random-string-of-48-chars'],
      ['JWT_SECRET', 'CHANGEME-changeme-changeme-changeme-1234'],
      ['JWT_SECRET', 'replace-me-with-at-least-32-characters!!'],
      ['JWT_SECRET', '<your-secret-of-at-least-32-characters>'],
      ['ENCRYPTION_KEY', 'change-me'],
      ['ENCRYPTION_KEY_PREVIOUS', 'placeholder'],
      ['S3_ACCESS_KEY_ID', 'minioadmin'],
      ['S3_SECRET_ACCESS_KEY', 'minioadmin'],
      ['S3_SECRET_ACCESS_KEY', 'formwork-secret'],
      ['S3_SECRET_ACCESS_KEY', 'Secret'],
      ['S3_SECRET_ACCESS_KEY', 'password'],
    ];
    for (const [name, value] of refused) {
      const env = { S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'AKREALKEY1', S3_SECRET_ACCESS_KEY: 'r4nd0m-Secret-Value-9f8e', [name]: value };
      for (const NODE_ENV of ['development', 'production', 'test']) {
        expect(() => loadConfig({ ...env, NODE_ENV })).toThrow(new RegExp(`^Invalid configuration: ${name} holds a placeholder value`));
      }
    }
    // Real, random values pass.
    const c = loadConfig({ JWT_SECRET: 'a3F9kQ2mZ7xW1pR8tY4uV6bN0cL5jH2g', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'AKIA4EXAMPLEREALKEY', S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz' });
    expect(c.auth.jwtSecret).toBe('a3F9kQ2mZ7xW1pR8tY4uV6bN0cL5jH2g');
    expect(c.storage.s3?.secretAccessKey).toBe('wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz');
  });

  it('parses the outbound allow-list and S3 settings', () => {
    const c = loadConfig({ OUTBOUND_ALLOWLIST: '127.0.0.1, 10.0.0.0/8', S3_BUCKET: 'b', S3_ENDPOINT: 'http://localhost:9000' });
    expect(c.outbound.allowlist).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(c.storage.s3).toMatchObject({ bucket: 'b', endpoint: 'http://localhost:9000', forcePathStyle: true });
  });
});
