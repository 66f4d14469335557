import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Shells out to bash and the install script, so it lives with the integration tests (README "Test it"). */
const root = join(__dirname, '../../..');

describe('scripts/install-tools.sh (with a fake `go` that records what it is asked to build: the real build takes minutes)', () => {
  let dir: string;
  let toolsDir: string;
  let log: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'install-tools-'));
    toolsDir = join(dir, 'bin');
    log = join(dir, 'go.log');
    // `go install <module>@<version>` with GOBIN: write an executable named after the module's last path element.
    const fakeGo = join(dir, 'go');
    writeFileSync(
      fakeGo,
      [
        '#!/usr/bin/env bash',
        `printf '%s\\n' "$*" >> '${log}'`,
        'module="${2%@*}"',
        'name="${module##*/}"',
        'printf "#!/bin/sh\\n" > "$GOBIN/$name"',
        'chmod +x "$GOBIN/$name"',
      ].join('\n'),
    );
    chmodSync(fakeGo, 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    spawnSync('bash', [join(root, 'scripts/install-tools.sh'), ...args], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, FORMWORK_TOOLS_DIR: toolsDir },
    });
  const built = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);

  it('`temporal` (what the first npm start runs) builds only the Temporal CLI', () => {
    const r = run('temporal');
    expect(r.status).toBe(0);
    expect(built()).toEqual(['install github.com/temporalio/cli/cmd/temporal@v1.5.1']);
    expect(existsSync(join(toolsDir, 'temporal'))).toBe(true);
    expect(existsSync(join(toolsDir, 'versitygw'))).toBe(false);
  });

  it('`versitygw` builds only the S3 server', () => {
    expect(run('versitygw').status).toBe(0);
    expect(built()).toEqual(['install github.com/versity/versitygw/cmd/versitygw@v1.2.0']);
  });

  it('no argument builds every tool (as .ci/run does), and a second run builds nothing', () => {
    expect(run().status).toBe(0);
    expect(built()).toEqual([
      'install github.com/temporalio/cli/cmd/temporal@v1.5.1',
      'install github.com/versity/versitygw/cmd/versitygw@v1.2.0',
    ]);
    const again = run();
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('install-tools: temporal present');
    expect(built()).toHaveLength(2);
  });

  it.each([['s3'], ['$(touch pwned)'], ['temporal; touch pwned'], ['-rf'], ['']])(
    'an unknown tool name %j is refused with exit 2, builds nothing and runs nothing',
    (name) => {
      const r = run('temporal', name);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('install-tools: unknown tool');
      expect(r.stderr).toContain('known: temporal, versitygw');
      expect(built()).toEqual([]);
      expect(existsSync(join(dir, 'pwned'))).toBe(false);
    },
  );
});
