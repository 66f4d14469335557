import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Router from '@koa/router';
import type { Services } from '../../platform/services';
import { AppError } from '../../domain/errors';
import type { TemplateDefinition, TemplateType } from '../../domain/templates/template.types';
import type { Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { projectRootHolding } from '../project-root';
import { actorOf, templateGuards, templateRouter } from './template-guards';
import { templateEndpointsAt, type TemplatePrefix } from './templates.endpoints';
import * as io from './template-io.service';

/**
 * The templates people can start from (docs/templates.md "Examples"): the files in docs/examples,
 * each a definition with sample data, the certificate with its font as assets. Loading one is an
 * import of it (template-io.service.ts): its assets become the project's, its name is made free.
 */

export const EXAMPLE_KEYS = ['invoice', 'quote', 'report', 'certificate'] as const;
export type ExampleKey = (typeof EXAMPLE_KEYS)[number];

interface ExampleFile {
  name: string;
  description: string;
  templateType: TemplateType;
  definition: TemplateDefinition;
  sampleData: Record<string, unknown>;
  /** Files next to the example (fonts), carried as the import file's assets. */
  assets?: Array<{ ref: string; name: string; file: string }>;
}

export interface Example {
  key: ExampleKey;
  name: string;
  description: string;
  outputFormats: TemplateType[];
  sampleData: Record<string, unknown>;
  /** A template file (domain/templates/template-file.ts) of the example, assets included. */
  file: string;
}

/** docs/examples, found from here whether this runs from the sources or from dist/. */
function examplesDir(): string {
  const root = projectRootHolding(join('docs', 'examples', 'fonts'));
  if (!root) throw new Error('docs/examples not found');
  return join(root, 'docs', 'examples');
}

const loaded = new Map<ExampleKey, Promise<Example>>();

async function readExample(key: ExampleKey): Promise<Example> {
  const dir = examplesDir();
  const example = JSON.parse(await readFile(join(dir, `${key}.json`), 'utf8')) as ExampleFile;
  const assets = await Promise.all((example.assets ?? []).map(async (a) => ({ ref: a.ref, name: a.name, data: (await readFile(join(dir, a.file))).toString('base64') })));
  // Both formats: every example renders to PDF and to a workbook.
  const outputFormats: TemplateType[] = [example.templateType, ...(['pdf', 'excel'] as const).filter((f) => f !== example.templateType)];
  const file = { formatVersion: 1, name: example.name, description: example.description, outputFormats, ...example.definition, ...(assets.length > 0 ? { assets } : {}) };
  return { key, name: example.name, description: example.description, outputFormats, sampleData: example.sampleData, file: JSON.stringify(file) };
}

function isExampleKey(key: string): key is ExampleKey {
  return (EXAMPLE_KEYS as readonly string[]).includes(key);
}

/** An example by key (read once per process); 404 ERR_TMPL_001 for another key. */
function example(key: string): Promise<Example> {
  if (!isExampleKey(key)) throw new AppError('ERR_TMPL_001', `No example named '${key}': there are ${EXAMPLE_KEYS.join(', ')}`, { example: key });
  let found = loaded.get(key);
  if (!found) {
    found = readExample(key);
    found.catch(() => loaded.delete(key));
    loaded.set(key, found);
  }
  return found;
}

/**
 * GET /examples and POST /examples/:key under a template prefix. Registered before the routes with
 * `/:id` (templates.routes.ts), which would take `examples` for a template's slug (a reserved one).
 */
export function templateExampleRoutes(services: Services, prefix: TemplatePrefix): Router {
  const routes = templateEndpointsAt[prefix];
  const router = templateRouter(prefix);
  const { read, write } = templateGuards(services.db);
  const deps = { db: services.db, evaluator: services.evaluator };

  mount(router, routes.examples, read, async (ctx) => {
    const all = await Promise.all(EXAMPLE_KEYS.map((key) => example(key)));
    ctx.body = { data: all.map(({ key, name, description, outputFormats }) => ({ key, name, description, outputFormats })) };
  });

  // Starting from an example is importing it: a new draft (renamed if the name is taken), its fonts as the project's assets.
  mount(router, routes.startFromExample, write, async (ctx) => {
    const chosen = await example(ctx.params.key ?? '');
    const scope = ctx.state.scope as Scope;
    const result = await io.importTemplate(deps, services.config.assets, actorOf(scope), chosen.file, 'rename');
    // Kept with the new template too, so its editors preview with it wherever they open it.
    await io.keepSampleData(deps, scope.projectId, result.templateId, chosen.sampleData);
    ctx.status = 201;
    ctx.body = { ...result, sampleData: chosen.sampleData };
  });

  return router;
}
