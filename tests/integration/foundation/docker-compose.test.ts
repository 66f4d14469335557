import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * No Docker engine runs here, but the compose file must still be valid: docker-compose (installed
 * by .ci/run) parses and resolves it, and the three roles (API, worker, render worker) are wired to
 * every backing service.
 */
describe('docker-compose.yml', () => {
  const file = join(__dirname, '../../../docker-compose.yml');
  const secrets = { JWT_SECRET: 'jwt-from-the-operator-0123456789abcdef', ENCRYPTION_KEY: 'key-from-the-operator', MINIO_ROOT_USER: 'operator-user', MINIO_ROOT_PASSWORD: 'operator-password-42', SMTP_URL: 'smtp://relay.example:587' };
  const run = (env: Record<string, string>, ...args: string[]) =>
    execFileSync('docker-compose', ['-f', file, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: 'pipe' });
  const compose = (...args: string[]) => run(secrets, ...args);
  const refusal = (env: Record<string, string>): string => {
    try {
      run(env, 'config');
    } catch (err) {
      return String((err as { stderr?: string }).stderr);
    }
    throw new Error('docker-compose accepted the file');
  };

  it('parses and declares the whole stack', () => {
    expect(compose('config', '--services').trim().split('\n').sort()).toEqual(
      ['api', 'minio', 'minio-setup', 'postgres', 'prometheus', 'redis', 'query-worker', 'render-worker', 'temporal', 'temporal-db', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'worker'].sort(),
    );
  });

  it('points the API and the three worker roles at Postgres, Temporal, S3 and Redis', () => {
    const resolved = compose('config');
    for (const role of ['api', 'worker', 'render-worker', 'query-worker']) {
      const section = resolved.slice(resolved.indexOf(`\n  ${role}:\n`) + 1).split(/\n  \S/)[0];
      expect(section).toContain('DATABASE_URL: postgres://formwork:formwork@postgres:5432/formwork');
      expect(section).toContain('TEMPORAL_ADDRESS: temporal:7233');
      expect(section).toContain('S3_ENDPOINT: http://minio:9000');
      expect(section).toContain('REDIS_URL: redis://redis:6379');
    }
  });

  it('has no default secrets: each one unset stops compose with a message naming it', () => {
    for (const name of Object.keys(secrets)) {
      const { [name]: _unset, ...rest } = secrets as Record<string, string>;
      expect(refusal(rest)).toContain(`set ${name}`);
    }
    expect(refusal({ ...secrets, JWT_SECRET: '' })).toContain('set JWT_SECRET');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/change-?me|minioadmin|formwork-secret/i);
    expect(text).not.toMatch(/\$\{(JWT_SECRET|ENCRYPTION_KEY|MINIO_ROOT_USER|MINIO_ROOT_PASSWORD|SMTP_URL):?-/);
  });

  it('hands the operator\'s secrets and MinIO credentials to every role and to MinIO', () => {
    const resolved = compose('config');
    for (const role of ['api', 'worker', 'render-worker', 'query-worker']) {
      const section = resolved.slice(resolved.indexOf(`\n  ${role}:\n`) + 1).split(/\n  \S/)[0];
      expect(section).toContain(`JWT_SECRET: ${secrets.JWT_SECRET}`);
      expect(section).toContain(`ENCRYPTION_KEY: ${secrets.ENCRYPTION_KEY}`);
      expect(section).toContain(`SMTP_URL: ${secrets.SMTP_URL}`);
      expect(section).toContain(`S3_ACCESS_KEY_ID: ${secrets.MINIO_ROOT_USER}`);
      expect(section).toContain(`S3_SECRET_ACCESS_KEY: ${secrets.MINIO_ROOT_PASSWORD}`);
    }
    const minio = resolved.slice(resolved.indexOf('\n  minio:\n') + 1).split(/\n  \S/)[0];
    expect(minio).toContain(`MINIO_ROOT_USER: ${secrets.MINIO_ROOT_USER}`);
    expect(minio).toContain(`MINIO_ROOT_PASSWORD: ${secrets.MINIO_ROOT_PASSWORD}`);
  });

  it('publishes only the API beyond 127.0.0.1 (Temporal, its UI and MinIO stay on the host)', () => {
    const resolved = compose('config');
    const section = (name: string) => resolved.slice(resolved.indexOf(`\n  ${name}:\n`) + 1).split(/\n  \S/)[0];
    const ports = (name: string) => [...section(name).matchAll(/^ {4}- (\S+\/tcp)$/gm)].map((m) => m[1]);
    expect(ports('temporal')).toEqual(['127.0.0.1:7233:7233/tcp']);
    expect(ports('temporal-ui')).toEqual(['127.0.0.1:8080:8080/tcp']);
    expect(ports('minio')).toEqual(['127.0.0.1:9000:9000/tcp', '127.0.0.1:9001:9001/tcp']);
    expect(ports('prometheus')).toEqual(['127.0.0.1:9090:9090/tcp']);
    // The long form (`published:`, every interface) is what a port without a host address becomes: the API's only.
    expect(section('api')).toMatch(/published: 3000\n\s+target: 3000/);
    expect(resolved.match(/published:/g)).toHaveLength(1);
  });

  it('runs each role with its own entry point', () => {
    const resolved = compose('config');
    const command = (role: string) => resolved.slice(resolved.indexOf(`\n  ${role}:\n`) + 1).split(/\n  \S/)[0];
    expect(command('api')).toContain('dist/api/main.js');
    expect(command('worker')).toContain('dist/worker/main.js');
    expect(command('render-worker')).toContain('dist/worker/render-main.js');
    // Tenants' databases are read in a process of its own with a heap and a memory limit.
    expect(command('query-worker')).toContain('dist/worker/query-main.js');
    expect(command('query-worker')).toContain('--max-old-space-size=512');
    expect(command('query-worker')).toMatch(/mem_limit: "?805306368"?|mem_limit: 768m/);
  });

  it('runs Temporal on its own database and has Prometheus scrape every role on ports the compose network alone reaches', () => {
    const resolved = parse(compose('config')) as { services: Record<string, { environment?: Record<string, string>; volumes?: string[]; ports?: unknown[]; depends_on?: Record<string, unknown> }> };
    const { services } = resolved;
    expect(services.temporal.environment).toMatchObject({ POSTGRES_SEEDS: 'temporal-db', PROMETHEUS_ENDPOINT: '0.0.0.0:8000' });
    expect(Object.keys(services.temporal.depends_on ?? {})).toEqual(['temporal-schema']);
    expect(Object.keys(services['temporal-schema'].depends_on ?? {})).toEqual(['temporal-db']);
    for (const role of ['api', 'worker', 'render-worker', 'query-worker']) {
      expect(services[role].environment).toMatchObject({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' });
    }
    for (const role of ['worker', 'render-worker', 'query-worker']) expect(services[role].environment?.TEMPORAL_METRICS_BIND).toBe('0.0.0.0:9465');
    expect(services.prometheus.volumes).toContain(`${join(__dirname, '../../../docs/prometheus.yml')}:/etc/prometheus/prometheus.yml:ro`);
    // The alert rules it loads, among them the non-determinism alert of an unpatched workflow change.
    expect(services.prometheus.volumes).toContain(`${join(__dirname, '../../../docs/prometheus-alerts.yml')}:/etc/prometheus/formwork-alerts.yml:ro`);
    const promConfig = parse(readFileSync(join(__dirname, '../../../docs/prometheus.yml'), 'utf8')) as { rule_files: string[] };
    expect(promConfig.rule_files).toEqual(['/etc/prometheus/formwork-alerts.yml']);
    const alerts = parse(readFileSync(join(__dirname, '../../../docs/prometheus-alerts.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    const nonDeterminism = alerts.groups.flatMap((g) => g.rules).find((r) => r.alert === 'FormworkWorkflowNonDeterminism');
    expect(nonDeterminism?.expr).toContain('temporal_workflow_task_execution_failed_total{failure_reason="NonDeterminismError"}');

    // docs/prometheus.yml scrapes exactly those services on those ports.
    const scrape = parse(readFileSync(join(__dirname, '../../../docs/prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ job_name: string; dns_sd_configs?: Array<{ names: string[]; port: number }>; static_configs?: Array<{ targets: string[] }> }>;
    };
    const targets = scrape.scrape_configs.flatMap((job) => [
      ...(job.dns_sd_configs ?? []).flatMap((d) => d.names.map((n) => `${n}:${d.port}`)),
      ...(job.static_configs ?? []).flatMap((c) => c.targets),
    ]);
    expect(targets.sort()).toEqual(['api:9464', 'query-worker:9464', 'query-worker:9465', 'render-worker:9464', 'render-worker:9465', 'temporal:8000', 'worker:9464', 'worker:9465']);
    for (const target of targets) expect(Object.keys(services)).toContain(target.split(':')[0]);
  });

  it('would survive growth: shards set before the first start, a supported server image, schema by the schema tool, fairness on', () => {
    const { services } = parse(compose('config')) as { services: Record<string, { image?: string; environment?: Record<string, string>; volumes?: string[]; command?: string[] }> };
    // The shard count can never change once the cluster exists: it is set, not left at the image's 4.
    expect(Number(services.temporal.environment?.NUM_HISTORY_SHARDS)).toBeGreaterThanOrEqual(512);
    expect(services.temporal.image).toMatch(/^temporalio\/server:1\.29\./);
    expect(Object.values(services).map((svc) => svc.image ?? '')).not.toContainEqual(expect.stringContaining('auto-setup'));
    expect(services['temporal-schema'].image).toMatch(/^temporalio\/admin-tools:1\.29\./);
    expect(services['temporal-schema'].command?.join('\n')).toContain('update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned');
    expect(services['temporal-schema'].command?.join('\n')).toContain('update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned');
    // The dynamic config it mounts turns fairness on (docs/architecture.md "Task queues").
    const mount = services.temporal.volumes?.find((v) => v.endsWith(':ro') && v.includes('dynamicconfig'));
    expect(mount).toBeDefined();
    expect(mount!.split(':')[1]).toBe(services.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH);
    const dynamic = parse(readFileSync(mount!.split(':')[0], 'utf8')) as Record<string, Array<{ value: unknown }>>;
    expect(dynamic['matching.enableFairness']).toEqual([{ value: true }]);
  });

  it('gives every role a health check, a restart policy and a stop grace longer than its shutdown grace', () => {
    const { services } = parse(compose('config')) as {
      services: Record<string, { healthcheck?: { test: string[] }; restart?: string; stop_grace_period?: string; depends_on?: Record<string, { condition: string }> }>;
    };
    const seconds = (d?: string) => Number(/^(\d+)s$/.exec(d ?? '')?.[1] ?? 0);
    for (const role of ['api', 'worker', 'render-worker', 'query-worker']) {
      expect(services[role].restart).toBe('unless-stopped');
      expect(services[role].healthcheck?.test.join(' ')).toMatch(/fetch\('http:\/\/127\.0\.0\.1:(3000\/api\/health|9464\/metrics)'\)/);
      expect(services[role].depends_on?.['temporal-setup']).toEqual({ condition: 'service_completed_successfully' });
    }
    // WORKER_SHUTDOWN_GRACE_SECONDS defaults to 30: a worker killed sooner would cut running activities short.
    for (const role of ['worker', 'render-worker', 'query-worker']) expect(seconds(services[role].stop_grace_period)).toBeGreaterThan(30);
    // The API's outbox waits up to about 16 s for its starts in flight.
    expect(seconds(services.api.stop_grace_period)).toBeGreaterThan(16);
  });
});
