import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../../support/app';

/**
 * The typed client as a user gets it (docs/openapi.md "The typed client"): clients/ts packed with
 * `npm pack` (which builds it), the tarball installed into an empty project with `npm install
 * --offline` (it has no dependencies, so no registry is asked), a TypeScript script type-checked
 * against the installed declarations only, then run by Node against the API.
 */
const run = promisify(execFile);
const root = resolve(__dirname, '../../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp({ worker: false, smtp: false });
  dir = await mkdtemp(join(tmpdir(), 'formwork-client-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The script a user would write: its types come from the installed package alone. */
const script = (baseUrl: string) => `
import { createFormworkClient, type components } from '@formwork/client';

const anonymous = createFormworkClient(${JSON.stringify(baseUrl)});
const health = await anonymous.GET('/api/health');
if (!health.data) throw new Error('no health answer: ' + health.response.status);
const status: string = health.data.status;

const signup = await anonymous.POST('/api/auth/signup', { body: { email: 'package@example.com', password: 'a long passphrase 7', name: 'Packaged' } });
if (!signup.data) throw new Error('sign-up refused: ' + JSON.stringify(signup.error));
// Fields the API always sends are typed as present: no optional chaining, no assertion.
const email: string = signup.data.user.email;
// @ts-expect-error an e-mail address is a string, so the declarations are not \`any\`
const wrong: number = signup.data.user.email;

const me = await createFormworkClient(${JSON.stringify(baseUrl)}, signup.data.accessToken).GET('/api/users/me');
if (!me.data) throw new Error('no user: ' + JSON.stringify(me.error));
const name: string = me.data.name;

// @ts-expect-error a path the API does not have
await anonymous.GET('/api/no-such-path');

const refused = await anonymous.POST('/api/auth/signup', { body: { email: 'not an address', password: 'x', name: '' } });
const error: components['schemas']['Error'] | undefined = refused.error;

console.log(JSON.stringify({ status, email, name, wrong: typeof wrong, refused: refused.response.status, code: error?.code }));
`;

test('the client packs, installs from its tarball without a registry, type-checks and runs on Node', async () => {
  const packed = await run(npm, ['pack', '--json', '--pack-destination', dir], { cwd: join(root, 'clients/ts'), maxBuffer: 16 * 1024 * 1024 });
  const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  const paths = files.map((f) => f.path).sort();
  expect(paths).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/schema.d.ts', 'dist/vendor/openapi-fetch.js']));
  expect(paths.filter((p) => !p.startsWith('dist/') && p !== 'package.json')).toEqual([]);

  const project = join(dir, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'uses-formwork', version: '1.0.0', private: true, type: 'module' }));
  await run(npm, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, filename)], { cwd: project });
  const installed = join(project, 'node_modules/@formwork/client');
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(manifest.dependencies).toBeUndefined();
  expect((await readdir(join(project, 'node_modules'))).filter((name) => !name.startsWith('.'))).toEqual(['@formwork']);

  // Browsers too: nothing the package runs imports a Node module.
  for (const file of ['dist/index.js', 'dist/vendor/openapi-fetch.js']) {
    const code = await readFile(join(installed, file), 'utf8');
    expect(code).not.toMatch(/from\s+['"]node:|require\(|from\s+['"](fs|path|http|https|crypto|stream|url)['"]/);
  }

  await writeFile(join(project, 'check.ts'), script(t.url));
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], strict: true, skipLibCheck: true, outDir: 'out' }, files: ['check.ts'] }),
  );
  // The repository's TypeScript, the project's own declarations: a type error fails here with tsc's message.
  await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project }).catch((err: { stdout?: string }) => {
    throw new Error(`the script does not type-check against the installed client:\n${err.stdout ?? String(err)}`);
  });

  const { stdout } = await run(process.execPath, [join(project, 'out/check.js')], { cwd: project });
  expect(JSON.parse(stdout)).toEqual({ status: 'ok', email: 'package@example.com', name: 'Packaged', wrong: 'string', refused: 400, code: expect.stringMatching(/^ERR_/) });
  // Two TypeScript compilations (the package's build and the script's check) and two npm runs: about a minute
  // alone, measured over four on a shared machine (the suite's 180 s is three times a test's own need).
}, 600_000);
