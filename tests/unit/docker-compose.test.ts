import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * No Docker engine runs here, but the compose file must still be valid: docker-compose (installed
 * by .ci/run) parses and resolves it, and the three roles (API, worker, render worker) are wired to
 * every backing service.
 */
describe('docker-compose.yml', () => {
  const file = join(__dirname, '../../docker-compose.yml');
  const compose = (...args: string[]) => execFileSync('docker-compose', ['-f', file, ...args], { encoding: 'utf8' });

  it('parses and declares the whole stack', () => {
    expect(compose('config', '--services').trim().split('\n').sort()).toEqual(
      ['api', 'minio', 'minio-setup', 'postgres', 'redis', 'render-worker', 'temporal', 'temporal-postgres', 'temporal-ui', 'worker'].sort(),
    );
  });

  it('points the API, the worker and the render worker at Postgres, Temporal, S3 and Redis', () => {
    const resolved = compose('config');
    for (const role of ['api', 'worker', 'render-worker']) {
      const section = resolved.slice(resolved.indexOf(`  ${role}:`)).split(/\n  \S/)[0];
      expect(section).toContain('DATABASE_URL: postgres://formwork:formwork@postgres:5432/formwork');
      expect(section).toContain('TEMPORAL_ADDRESS: temporal:7233');
      expect(section).toContain('S3_ENDPOINT: http://minio:9000');
      expect(section).toContain('REDIS_URL: redis://redis:6379');
    }
  });

  it('runs each role with its own entry point', () => {
    const resolved = compose('config');
    const command = (role: string) => resolved.slice(resolved.indexOf(`  ${role}:`)).split(/\n  \S/)[0];
    expect(command('api')).toContain('dist/api/main.js');
    expect(command('worker')).toContain('dist/worker/main.js');
    expect(command('render-worker')).toContain('dist/worker/render-main.js');
  });
});
