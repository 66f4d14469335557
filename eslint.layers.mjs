// Which layer may import what (docs/architecture.md, "Layers"). eslint.config.mjs spreads this list.
//
// One `no-restricted-imports` entry per directory: flat config does not merge a rule's options, so a
// second entry for the same files would replace the first. Layer paths are matched as relative
// imports (`../../db/...`); a layer's own folders (`../flow/...`) never match, since no domain folder
// is named like a layer. Type-only imports (`import type`) are allowed where a rule says so: they
// load no code at run time, and a workflow names its activities' signatures that way.

const up = String.raw`^(\.\./)+`;
/** Relative imports of these top-level directories. */
const layer = (...dirs) => `${up}(${dirs.join('|')})(/|$)`;

/** Framework, database, Temporal and I/O client packages: none of them belongs in domain/. */
const INFRASTRUCTURE_PACKAGES = String.raw`^(koa|koa-[^/]+|@koa/[^/]+|typeorm|pg|pg-[^/]+|@electric-sql/[^/]+|@temporalio/[^/]+|puppeteer|puppeteer-core|exceljs|ioredis|nodemailer|@aws-sdk/[^/]+|undici|rate-limiter-flexible|workerpool)(/|$)`;

/** The only workflows/ modules the API may load: signal (and query) definitions, no workflow code. */
const WORKFLOW_DEFINITION_MODULES = ['flow/approval-signals', String.raw`identity/account-deletion\.signals`];

const restrict = (...patterns) => ['error', { patterns: patterns.map((p) => ({ caseSensitive: true, ...p })) }];

export default [
  {
    files: ['domain/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { regex: INFRASTRUCTURE_PACKAGES, message: 'domain/ is plain logic: no framework, database, Temporal or I/O client package.' },
        { regex: layer('api', 'activities', 'adapters', 'workflows', 'worker', 'db', 'platform', 'scripts'), message: 'domain/ imports only domain/ (and plain libraries): every other layer imports it, not the other way round.' },
      ),
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        {
          regex: String.raw`^(?!\.|@temporalio/(workflow|common)(/|$))`,
          message: 'workflows/ run in the deterministic sandbox: of packages only @temporalio/workflow and @temporalio/common, no node:* modules.',
        },
        { regex: layer('db', 'api', 'adapters', 'platform', 'worker', 'scripts'), message: 'workflows/ import only domain/, other workflows/ and (by type) activities/.' },
        { regex: layer('activities'), allowTypeImports: true, message: 'A workflow names its activities by type only (`import type`) and calls them through proxyActivities.' },
      ),
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        {
          regex: `${up}workflows/(?!(${WORKFLOW_DEFINITION_MODULES.join('|')})$)`,
          allowTypeImports: true,
          message: 'The API loads no workflow code: signals and queries come from their definition modules (workflows/flow/approval-signals.ts, workflows/identity/account-deletion.signals.ts), input types from domain/ or `import type`.',
        },
        {
          regex: layer('activities'),
          allowTypeImports: true,
          message: 'The API imports no activity code (activity functions, bundles, activity-only helpers): what it shares with activities lives in adapters/ (I/O), db/ or domain/.',
        },
        { regex: layer('worker', 'scripts'), message: 'The API does not import process roles or scripts: shared start-up lives in platform/.' },
      ),
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { regex: layer('api', 'worker', 'platform', 'scripts'), message: 'activities/ import domain/, db/, adapters/ and other activities/ only (the API and the roles are built on them, not the other way round).' },
        { regex: layer('workflows'), allowTypeImports: true, message: 'activities/ take workflow input types by `import type` only.' },
      ),
    },
  },
  /**
   * adapters/ is what the processes use to reach the world: storage, mail, outbound HTTP, rendering,
   * evaluation processes and threads, the query runners and the channel senders. The API, the
   * activities, the roles and platform/ all import it; it imports only domain/, other adapters/ and
   * plain packages (db/ by type only: the rows a port hands it). activities/ is Temporal activity code
   * alone (`*.activity.ts`, the bundles `activities/<area>/index.ts` and `activities/index.ts`, and
   * helpers only activities use).
   */
  {
    files: ['adapters/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        {
          regex: layer('api', 'activities', 'workflows', 'worker', 'platform', 'scripts'),
          message: 'adapters/ import only domain/, other adapters/ and packages: the API, activities, workflows and roles are built on them, not the other way round.',
        },
        { regex: layer('db'), allowTypeImports: true, message: 'adapters/ take database rows through a port (`import type` from db/); the queries run in db/, composed in worker/ or platform/.' },
      ),
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        regex: layer('api', 'activities', 'adapters', 'workflows', 'worker', 'platform', 'scripts'),
        message: 'db/ imports only domain/ and db/: ports it needs (a mailer, a signer) are typed structurally or in domain/.',
      }),
    },
  },
  {
    files: ['platform/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { regex: layer('api', 'worker', 'scripts'), message: 'platform/ composes services for every role and imports no role: not api/, worker/ or scripts/.' },
        { regex: layer('workflows') + '(?!shared/)', allowTypeImports: true, message: 'platform/ takes workflow input types by `import type`; of workflow modules only workflows/shared/ (search attributes) as values.' },
      ),
    },
  },
  {
    files: ['worker/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({ regex: layer('api', 'scripts'), message: 'The worker roles do not import the API: what both need lives in platform/, db/ or domain/.' }),
    },
  },
  {
    files: ['packages/*/src/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        regex: String.raw`^\.\./\.\.`,
        message: 'A workspace package imports its own files, other packages and npm packages only: the server and agent/ depend on it, not the other way round.',
      }),
    },
  },
  {
    files: ['agent/src/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        regex: String.raw`^\.\./(?!package\.json$)`,
        message: 'agent/ imports its own files (and its package.json), the workspace packages (@formwork/wire, @formwork/query-runners) and npm packages: it compiles alone, none of the server.',
      }),
    },
  },
  {
    files: ['scripts/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        regex: `${up}api/(?!server$)`,
        message: 'Scripts start the API only through api/server.ts (startApiServer: `npm start` and the benchmarks); nothing else of api/.',
      }),
    },
  },
];
