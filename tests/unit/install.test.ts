import { readFileSync } from 'node:fs';
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

  it("the README's set-up is two commands: npm ci, then npm start", () => {
    const runIt = read('README.md').split('## Run it')[1];
    expect(runIt.match(/```sh\n([^`]*)```/)?.[1].trim().split('\n')).toEqual(['npm ci', 'npm start']);
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
