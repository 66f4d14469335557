// Builds the installable package into dist/ (`npm run build`; `npm pack` runs it too): index.ts
// compiled to an ES module with its declarations, the generated schema.d.ts beside it, and the
// one runtime it uses, openapi-fetch (MIT, no dependencies of its own), copied in from the
// repository's node_modules with the declarations of its types-only helper package. So the package
// has no dependencies: `npm install` of its tarball needs no registry, and a browser bundle pulls
// in nothing else. docs/openapi.md "The typed client" says why.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const vendor = join(dist, 'vendor');
const require = createRequire(import.meta.url);

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
copyFileSync(join(here, 'schema.d.ts'), join(dist, 'schema.d.ts'));

const fetchDir = dirname(require.resolve('openapi-fetch/package.json'));
const helpersDir = dirname(createRequire(join(fetchDir, 'package.json')).resolve('openapi-typescript-helpers/package.json'));
mkdirSync(vendor, { recursive: true });
copyFileSync(join(fetchDir, 'dist/index.mjs'), join(vendor, 'openapi-fetch.js'));
writeFileSync(join(vendor, 'openapi-fetch.d.ts'), replaceOnce(readFileSync(join(fetchDir, 'dist/index.d.mts'), 'utf8'), "from 'openapi-typescript-helpers'", "from './openapi-typescript-helpers.js'"));
copyFileSync(join(helpersDir, 'dist/index.d.mts'), join(vendor, 'openapi-typescript-helpers.d.ts'));
const version = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
writeFileSync(
  join(vendor, 'LICENSES.md'),
  [
    `openapi-fetch ${version(fetchDir)} (vendor/openapi-fetch.*) and openapi-typescript-helpers ${version(helpersDir)} (vendor/openapi-typescript-helpers.d.ts), https://github.com/openapi-ts/openapi-typescript:`,
    '',
    readFileSync(join(fetchDir, 'LICENSE'), 'utf8'),
  ].join('\n'),
);

// The compiled entry imports the copy, not the package.
for (const file of ['index.js', 'index.d.ts']) {
  const path = join(dist, file);
  writeFileSync(path, replaceAll(readFileSync(path, 'utf8'), "from 'openapi-fetch'", "from './vendor/openapi-fetch.js'"));
}

function replaceAll(text, from, to) {
  const parts = text.split(from);
  if (parts.length < 2) throw new Error(`expected \`${from}\`, found none`);
  return parts.join(to);
}

function replaceOnce(text, from, to) {
  const parts = text.split(from);
  if (parts.length !== 2) throw new Error(`expected one \`${from}\`, found ${parts.length - 1}`);
  return parts.join(to);
}
