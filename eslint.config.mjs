// ESLint for the TypeScript of every layer (README "Test it", docs/architecture.md "Lint"). `npm run lint`
// runs it, then knip for unused exports; `npm test` runs `npm run lint` after the type check.
//
// A focused rule set with type information, not the whole recommended set: rules that catch bugs
// (a promise nobody awaits, a promise where a callback's result is ignored, awaiting a non-promise,
// throwing a non-Error), plus the layer import rules that eslint.layers.mjs holds.
//
// knip.json: the unused-export check. Its entry points are what is loaded by name or path rather than
// imported: api/main.ts, worker/*main.ts, workflows/index.ts (the Temporal bundle), the thread and
// process files adapters/threads.ts `threadFile` loads, scripts/ and tests/. An export that only its
// own file uses loses `export`; exported types used in their own file's signatures stay.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import layers from './eslint.layers.mjs';

const layerDirs = ['api', 'activities', 'adapters', 'workflows', 'worker', 'db', 'domain', 'platform', 'scripts', 'tests', 'agent/src', 'packages/*/src'];
// The dashboard (web/, its own tsconfig for the browser and JSX) keeps the same bug-catching rules.
const webFiles = ['web/src/**/*.ts', 'web/src/**/*.tsx', 'web/vite.config.ts'];

export default defineConfig(
  { ignores: ['dist/**', 'web/dist/**', 'coverage/**', 'data/**', '.cache/**'] },
  {
    files: [...layerDirs.map((dir) => `${dir}/**/*.ts`), ...webFiles],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its rejection (and, in a workflow, its ordering). Fire-and-forget
      // is written `void promise` next to the comment saying where its errors go.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a void callback is expected (an event handler, forEach, a timer): its
      // rejection goes nowhere. Koa middleware and route handlers return their promise to Koa, which awaits it.
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // Passing on what a catch caught (typed unknown) is allowed; rejecting with a literal is not.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-array-delete': 'error',
      // Dead imports and locals (knip finds dead exports). Parameters stay: a port's implementation may ignore some.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/no-implied-eval': 'error',
      // `return promise` inside try/catch/finally skips the catch and runs the finally too early.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
    },
  },
  ...layers,
);
