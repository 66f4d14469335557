import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The compiled file a worker thread or process runs (`evaluation/eval-worker` → dist/adapters/evaluation/
 * eval-worker.js). Workers load JavaScript: from the build (`dist/`) the file sits next to this
 * one; when this module runs from its TypeScript source (ts-jest), the build's copy is used, which
 * is why `npm test` compiles before it runs Jest.
 */
export function threadFile(relative: string): string {
  const base = __filename.endsWith('.ts') ? resolve(__dirname, '..', 'dist', 'adapters') : __dirname;
  const file = join(base, `${relative}.js`);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  return file;
}
