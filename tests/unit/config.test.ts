import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from '../../domain/config';

describe('loadConfig', () => {
  it('applies documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.publicUrl).toBe('http://localhost:3000');
    expect(c.dataDir).toBe('./data');
    expect(c.database.url).toBeUndefined();
    expect(c.limits.perMinute).toEqual({ apiKey: 100, oauth: 120, jwt: 200, anonymous: 30 });
    expect(c.documents.freeDocumentsPerMonth).toBe(100);
    expect(c.rendering).toEqual({
      poolSize: 2,
      browserMaxDocuments: 200,
      limits: { maxPdfPages: 200, maxExcelRows: 100000, maxLoopIterations: 10000 },
      imageHostAllowlist: [],
      maxHtmlBytes: 10 * 1024 * 1024,
      maxCustomRenderBytes: 20 * 1024 * 1024,
    });
    expect(c.evaluation).toEqual({ poolSize: availableParallelism(), timeoutMs: 1000, maxHeapMb: 64 });
    expect(() => loadConfig({ EVAL_TIMEOUT_MS: '5' })).toThrow(/EVAL_TIMEOUT_MS/);
  });

  it('names the variable when a value is bad', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^Invalid configuration: PORT must be a number$/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });

  it('requires JWT_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET is required in production/);
  });

  it('parses the outbound allow-list and S3 settings', () => {
    const c = loadConfig({ OUTBOUND_ALLOWLIST: '127.0.0.1, 10.0.0.0/8', S3_BUCKET: 'b', S3_ENDPOINT: 'http://localhost:9000' });
    expect(c.outbound.allowlist).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(c.storage.s3).toMatchObject({ bucket: 'b', endpoint: 'http://localhost:9000', forcePathStyle: true });
  });
});
