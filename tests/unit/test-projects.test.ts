import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * `npm run test:unit` runs in seconds on a machine without Postgres, Temporal, Chromium or the tools
 * (README "Test it"): the unit project starts nothing, and no unit test reaches, through anything it
 * imports from this repository, a module that talks to a service, launches a browser or shells out.
 */
const root = join(__dirname, '../..');
const jestConfig = require(join(root, 'jest.config.js'));
const hostileConfig = require(join(root, 'jest.hostile.config.js'));
const project = (name: string) => jestConfig.projects.find((p: { displayName?: string }) => p.displayName === name);

/** Modules that connect to a service, start a server or browser, or run another program. */
const SERVICE_MODULES = /^(node:)?child_process$|^puppeteer(-core)?$|^@temporalio\/(client|worker|testing)$|^pg$|^typeorm$|^ioredis$|^nodemailer$/;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

/** Module specifiers loaded at run time (type-only imports are erased). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'/gm)].map((m) => m[1]);
  specs.push(...[...text.matchAll(/^\s*import\s+'([^']+)'/gm)].map((m) => m[1]));
  specs.push(...[...text.matchAll(/\b(?:require|import)\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]));
  return specs;
}

function resolveLocal(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

/** What the test file reaches: every service module on the way, with the chain of files that leads to it. */
function serviceModulesReachedFrom(testFile: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const queue: Array<{ file: string; chain: string[] }> = [{ file: testFile, chain: [relative(root, testFile)] }];
  while (queue.length > 0) {
    const { file, chain } = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    // A path into the build, quoted: dist, dist/…, ../dist/… (as adapters/threads.ts and the process helpers write it).
    if (/['"`](?:\.\.?\/)*dist['"/]/.test(readFileSync(file, 'utf8'))) found.push(`the tsc build (dist) via ${chain.join(' > ')}`);
    for (const spec of importsOf(file)) {
      // A workspace package from its sources, as Jest's moduleNameMapper loads it (jest.config.js).
      const local = spec.startsWith('@formwork/') ? `./${relative(dirname(file), join(root, 'packages', spec.slice('@formwork/'.length), 'src', 'index'))}` : spec;
      if (local.startsWith('.')) {
        const next = resolveLocal(file, local);
        if (next) queue.push({ file: next, chain: [...chain, relative(root, next)] });
      } else if (SERVICE_MODULES.test(spec)) {
        found.push(`${spec} via ${chain.join(' > ')}`);
      }
    }
  }
  return found;
}

describe('Jest projects (README "Test it")', () => {
  it('unit covers tests/unit and starts nothing; integration covers tests/integration with the Temporal setup', () => {
    expect(jestConfig.projects.map((p: { displayName: string }) => p.displayName).sort()).toEqual(['integration', 'unit']);
    expect(project('unit').roots).toEqual(['<rootDir>/tests/unit']);
    expect(project('unit').globalSetup).toBeUndefined();
    expect(project('unit').globalTeardown).toBeUndefined();
    expect(project('integration').roots).toEqual(['<rootDir>/tests/integration']);
    expect(project('integration').globalSetup).toBe('<rootDir>/tests/support/global-setup.ts');
    expect(project('integration').globalTeardown).toBe('<rootDir>/tests/support/global-teardown.ts');
    // Jest reads these at the top level only, for both projects.
    expect(jestConfig).toMatchObject({ testTimeout: 180000, maxWorkers: 4 });
  });

  it('the hostile pass keeps its own run: tests/hostile alone, one worker, the integration setup', () => {
    expect(hostileConfig).toMatchObject({
      roots: ['<rootDir>/tests/hostile'],
      maxWorkers: 1,
      testTimeout: 180000,
      globalSetup: '<rootDir>/tests/support/global-setup.ts',
      globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
    });
    expect(hostileConfig.projects).toBeUndefined();
  });

  it('npm test runs every phase, each timed, after the build and the lint; npm run test:unit only the unit project, without a build', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.test).toBe('bash scripts/test.sh');
    expect(scripts.lint).toBe('eslint . && knip');
    expect(scripts['test:unit']).toBe('jest --selectProjects unit');
    // scripts/test.sh: the phases in order, each through `phase` (scripts/phases.sh), then the report;
    // ESLint in the background beside the type check, knip and the unit tests, awaited before the integration tests.
    const script = readFileSync(join(root, 'scripts/test.sh'), 'utf8');
    const steps = [...script.matchAll(/^phase "[^"]+" (.+)$/gm)].map((m) => m[1]);
    expect(steps).toEqual([
      'npx eslint . &',
      // The workspace packages (packages/*/dist), which dist/ requires at run time.
      'npm run build:packages --silent',
      'npx tsc -p tsconfig.json',
      // The dashboard's build (web/dist), which the browser tests load from the API.
      'npm run build --workspace web --silent',
      'npx knip',
      'env FORMWORK_TEST_FULL=1 npx jest --selectProjects unit',
      'wait "$eslint"',
      'npx jest --selectProjects integration',
      'npx jest -c jest.hostile.config.js',
    ]);
    expect(script.indexOf('wait "$eslint"')).toBeGreaterThan(script.indexOf('--selectProjects unit'));
    expect(script.indexOf('wait "$eslint"')).toBeLessThan(script.indexOf('--selectProjects integration'));
  });

  it('no test is retried: a test that cannot pass reliably is fixed, not run again (docs/testing.md)', () => {
    const sources = [join(root, 'jest.config.js'), join(root, 'jest.hostile.config.js'), ...testFiles(join(root, 'tests')), ...readdirSync(join(root, 'tests/support')).map((f) => join(root, 'tests/support', f))];
    const retrying = sources.filter((file) => statSync(file).isFile() && /retryTimes|jest-retries|--retry/.test(readFileSync(file, 'utf8')));
    expect(retrying.map((file) => relative(root, file))).toEqual([relative(root, __filename)]);
  });

  it('no unit test reaches Postgres, Temporal, Redis, SMTP, Chromium, another program or dist/', () => {
    const files = testFiles(join(root, 'tests/unit'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap(serviceModulesReachedFrom)).toEqual([]);
  });

  it('the scan sees a service module behind a chain of local imports (the integration tests reach many)', () => {
    expect(serviceModulesReachedFrom(join(root, 'tests/integration/foundation/docker-compose.test.ts'))).toContain(
      'node:child_process via tests/integration/foundation/docker-compose.test.ts',
    );
    const app = serviceModulesReachedFrom(join(root, 'tests/integration/flow/approvals.test.ts'));
    for (const reached of ['pg', 'typeorm', '@temporalio/worker', 'the tsc build (dist)']) {
      expect({ reached, found: app.some((line) => line.startsWith(`${reached} via `)) }).toEqual({ reached, found: true });
    }
  });
});
