import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../domain/config';
import { temporalConnectionOptions, workerDeploymentOptions } from '../../../platform/temporal';

/** Connecting to a Temporal cluster that is not the dev server (docs/operations.md "Temporal Cloud"). */
describe('Temporal connection options', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'formwork-tls-'));
    await writeFile(join(dir, 'client.pem'), 'CERT');
    await writeFile(join(dir, 'client.key'), 'KEY');
    await writeFile(join(dir, 'ca.pem'), 'CA');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const options = (env: Record<string, string>) => temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', ...env }).temporal);

  it('connects in plain gRPC by default (the dev server)', () => {
    expect(options({})).toEqual({ address: 'ns.acct.tmprl.cloud:7233' });
  });

  it('uses TLS with an API key, as Temporal Cloud needs', () => {
    expect(options({ TEMPORAL_API_KEY: 'key-123' })).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: {}, apiKey: 'key-123' });
    expect(options({ TEMPORAL_API_KEY: 'key-123', TEMPORAL_TLS: 'false' })).toEqual({ address: 'ns.acct.tmprl.cloud:7233', apiKey: 'key-123' });
  });

  it('reads mTLS files, a custom CA and a server name', () => {
    const o = options({ TEMPORAL_TLS_CERT_PATH: join(dir, 'client.pem'), TEMPORAL_TLS_KEY_PATH: join(dir, 'client.key'), TEMPORAL_TLS_CA_PATH: join(dir, 'ca.pem'), TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' });
    expect(o.tls).toEqual({ serverNameOverride: 'temporal.internal', serverRootCACertificate: Buffer.from('CA'), clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') } });
  });

  it('refuses half an mTLS pair and names a missing file', () => {
    expect(() => loadConfig({ TEMPORAL_TLS_CERT_PATH: join(dir, 'client.pem') })).toThrow(/TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together/);
    expect(() => options({ TEMPORAL_TLS_CA_PATH: join(dir, 'missing.pem') })).toThrow(/TEMPORAL_TLS_CA_PATH: cannot read .*missing\.pem/);
  });

  it('polls as a Worker Deployment version only when a deployment name and build id are set', () => {
    expect(workerDeploymentOptions(loadConfig({}).temporal)).toEqual({});
    expect(workerDeploymentOptions(loadConfig({ TEMPORAL_WORKER_DEPLOYMENT_NAME: 'formwork', TEMPORAL_WORKER_BUILD_ID: 'abc123' }).temporal)).toEqual({
      workerDeploymentOptions: { version: { deploymentName: 'formwork', buildId: 'abc123' }, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' },
    });
    expect(workerDeploymentOptions(loadConfig({ TEMPORAL_WORKER_DEPLOYMENT_NAME: 'formwork', TEMPORAL_WORKER_BUILD_ID: 'abc123', TEMPORAL_WORKER_VERSIONING: 'pinned' }).temporal).workerDeploymentOptions?.defaultVersioningBehavior).toBe('PINNED');
    expect(() => loadConfig({ TEMPORAL_WORKER_VERSIONING: 'sometimes' })).toThrow(/TEMPORAL_WORKER_VERSIONING/);
  });
});
