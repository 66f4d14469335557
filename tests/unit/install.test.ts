import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

type LockEntry = { version?: string; optionalDependencies?: Record<string, string>; dependencies?: Record<string, string> };

/** Where Node (and npm) finds `name` from the package installed at `from`: its own node_modules, then each parent's. */
function resolveInLock(packages: Record<string, LockEntry>, from: string, name: string): LockEntry | undefined {
  let dir = from;
  for (;;) {
    const entry = packages[`${dir ? `${dir}/` : ''}node_modules/${name}`];
    if (entry) return entry;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

describe('npm ci (README "Run it")', () => {
  it('the lock file lists every optional platform binary of every locked package, so npm ci does not refuse it', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockEntry> };
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
        const found = resolveInLock(lock.packages, path, name);
        // The optional binaries are pinned to their parent's exact version.
        if (!found || (/^\d+\.\d+\.\d+$/.test(range) && found.version !== range)) missing.push(`${path} -> ${name}@${range}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('package.json pins the overridden packages to exact versions, and the lock holds those versions', () => {
    const pkg = JSON.parse(read('package.json')) as { overrides?: Record<string, string> };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockEntry> };
    const overrides = Object.entries(pkg.overrides ?? {});
    expect(overrides.map(([name]) => name).sort()).toEqual(['@swc/core', 'unrs-resolver']);
    for (const [name, version] of overrides) {
      expect(version).toMatch(/^\d+\.\d+\.\d+$/);
      const locked = Object.entries(lock.packages).filter(([path]) => path.endsWith(`node_modules/${name}`));
      expect(locked.length).toBeGreaterThan(0);
      expect(locked.map(([, entry]) => entry.version)).toEqual(locked.map(() => version));
    }
  });

  it('CI and the Docker image install with npm ci, not npm install', () => {
    for (const file of ['.ci/run', 'Dockerfile']) {
      const commands = read(file)
        .split('\n')
        .filter((line) => !line.trim().startsWith('#'))
        .join('\n');
      expect({ file, ci: /\bnpm ci\b/.test(commands) }).toEqual({ file, ci: true });
      expect({ file, install: /\bnpm install\b/.test(commands) }).toEqual({ file, install: false });
    }
  });
});

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
