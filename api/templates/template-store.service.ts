import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { recordActivity } from '../../db/identity/activity';
import { insertWithFreshCandidates, violatedIndex, type Queryable } from '../../db/sql';
import { TemplateEntity } from '../../db/templates/template.entity';
import { insertTemplateRow } from '../../db/templates/template-rows';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import { isOutputFormat, OUTPUT_FORMATS } from '../../domain/templates/template-definition';
import { newShortId, suffixedSlug, templateSlug } from '../../domain/templates/template-ids';
import type { TemplateDefinition, TemplateType } from '../../domain/templates/template.types';

/**
 * What every way of making a template shares (create, duplicate, import): checks on formats and
 * definitions, unique names and slugs, and the insert with its activity entry.
 */

export interface TemplateDeps {
  db: DataSource;
  /** Checks definitions in the evaluation workers, within the budget (domain/checks.ts). */
  evaluator: Evaluator;
}

/** Who acts, in which project; `userId` is absent for API keys (they only read templates). */
export interface Actor {
  projectId: string;
  userId?: string;
}

export function nameTaken(name: string): AppError {
  return new AppError('ERR_TMPL_011', `A template named '${name}' already exists`, { field: 'name' });
}

/** Spec: `pdf`, `excel`, or both. Anything else, or none, is ERR_TMPL_009. Repeats are dropped. */
export function checkOutputFormats(formats: unknown[]): TemplateType[] {
  const bad = formats.find((f) => !isOutputFormat(f));
  if (formats.length === 0 || bad !== undefined) {
    const what = formats.length === 0 ? 'no output format given' : `unknown output format '${String(bad)}'`;
    throw new AppError('ERR_TMPL_009', `Invalid template type: ${what} (allowed: ${OUTPUT_FORMATS.join(', ')})`, {
      field: 'outputFormats',
      allowed: OUTPUT_FORMATS,
    });
  }
  return [...new Set(formats as TemplateType[])];
}

/**
 * Refuses a definition the validators find errors in: 400 ERR_TMPL_008, the first problem in
 * the message and `relatedInfo.path`, every problem in `relatedInfo.errors`.
 */
export async function assertValidDefinition(deps: TemplateDeps, projectId: string, def: TemplateDefinition, formats: readonly TemplateType[]): Promise<void> {
  const result = await deps.evaluator.check(projectId, 'templateDefinition', def, [...formats]);
  if (result.valid) return assertAppendedPdfs(deps, projectId, def);
  const first = result.errors[0];
  throw new AppError('ERR_TMPL_008', `Template schema validation failed: ${first.path}: ${first.message}`, {
    path: first.path,
    errors: result.errors,
  });
}

/** Whether a live template of the project already has this name (names compare case-insensitively). */
export async function nameExists(db: Queryable, projectId: string, name: string, exceptId?: string): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `SELECT 1 FROM templates WHERE project_id = $1 AND lower(name) = lower($2) AND deleted_at IS NULL AND id IS DISTINCT FROM $3::uuid LIMIT 1`,
    [projectId, name, exceptId ?? null],
  );
  return rows.length > 0;
}

/**
 * The first free name of `base (copy)`, `base (copy 2)`, … (or `base (2)`, … without a label),
 * for duplicates and renamed imports: a copy should not fail on the name it was given.
 */
export async function freeName(db: Queryable, projectId: string, base: string, label?: string): Promise<string> {
  const candidate = (n: number) => (label ? (n === 1 ? `${base} (${label})` : `${base} (${label} ${n})`) : `${base} (${n + 1})`);
  const candidates = Array.from({ length: 50 }, (_, i) => candidate(i + 1));
  const rows: Array<{ name: string }> = await db.query(
    `SELECT lower(name) AS name FROM templates WHERE project_id = $1 AND deleted_at IS NULL AND lower(name) = ANY($2)`,
    [projectId, candidates.map((c) => c.toLowerCase())],
  );
  const taken = new Set(rows.map((r) => r.name));
  return candidates.find((c) => !taken.has(c.toLowerCase())) ?? `${base} (${newShortId().slice(5)})`;
}

/** The readable slug, or `slug-2`, `slug-3`… when a live template of the project has it. */
async function freeSlug(db: Queryable, projectId: string, base: string): Promise<string> {
  const rows: Array<{ slug: string }> = await db.query(
    `SELECT slug FROM templates WHERE project_id = $1 AND deleted_at IS NULL AND (slug = $2 OR slug LIKE $2 || '-%')`,
    [projectId, base],
  );
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; n < 1000; n += 1) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  return suffixedSlug(base);
}

export interface NewTemplate {
  name: string;
  description: string | null;
  outputFormats: TemplateType[];
  folderId: string | null;
  draft: TemplateDefinition;
}

export interface InsertOptions {
  /** On a name taken meanwhile: pick another with this (copies, renamed imports) instead of ERR_TMPL_011. */
  rename?: () => Promise<string>;
  /** Extra fields of the `template_created` activity entry (e.g. what it was duplicated from). */
  activity?: Record<string, unknown>;
  /** Runs in the transaction that inserts the template (the Idempotency-Key's answer, docs/idempotency.md). */
  inTransaction?: (m: EntityManager, template: TemplateEntity) => Promise<void>;
}

/**
 * Inserts a template with its `template_created` entry in one transaction. The unique indexes
 * decide races: a slug or short id taken meanwhile is replaced and the insert tried again.
 */
export async function insertTemplate(deps: TemplateDeps, actor: Actor, input: NewTemplate, options: InsertOptions = {}): Promise<TemplateEntity> {
  let name = input.name;
  if (!options.rename && (await nameExists(deps.db, actor.projectId, name))) throw nameTaken(name);
  const base = templateSlug(name);
  let slug = await freeSlug(deps.db, actor.projectId, base);
  const { rename } = options;
  const fresh: Record<string, () => void | Promise<void>> = {
    templates_project_slug_key: () => void (slug = suffixedSlug(base)),
    // Every try draws a new short id.
    templates_short_id_key: () => undefined,
    ...(rename ? { templates_project_name_key: async () => void (name = await rename()) } : {}),
  };
  try {
    return await insertWithFreshCandidates(5, fresh, async () => {
      const now = new Date();
      const template = Object.assign(new TemplateEntity(), {
        id: randomUUID(),
        projectId: actor.projectId,
        shortId: newShortId(),
        slug,
        ...input,
        name,
        isPublished: false,
        publishedAt: null,
        latestVersion: 0,
        createdBy: actor.userId ?? null,
        deletedAt: null,
        createdAt: now,
        updatedAt: now,
      } satisfies TemplateEntity);
      await deps.db.transaction(async (m) => {
        await insertTemplateRow(m, template);
        await recordActivity(m, {
          projectId: actor.projectId,
          userId: actor.userId ?? null,
          type: 'template_created',
          data: { template: { id: template.id, name: template.name }, ...options.activity },
        });
        await options.inTransaction?.(m, template);
      });
      return template;
    });
  } catch (err) {
    throw violatedIndex(err) === 'templates_project_name_key' ? nameTaken(name) : err;
  }
}

/** `schema.appendPdfs` names PDF assets of the project (docs/documents.md "Merging and appended PDFs"): ERR_TMPL_008 naming the first that is not. */
async function assertAppendedPdfs(deps: TemplateDeps, projectId: string, def: TemplateDefinition): Promise<void> {
  const ids = def.schema.appendPdfs ?? [];
  if (ids.length === 0) return;
  const rows: Array<{ id: string }> = await deps.db.query(`SELECT id FROM template_assets WHERE project_id = $1 AND kind = 'pdf' AND id = ANY($2::uuid[])`, [projectId, ids]);
  const found = new Set(rows.map((r) => r.id.toLowerCase()));
  const missing = ids.findIndex((id) => !found.has(id.toLowerCase()));
  if (missing < 0) return;
  const error = { path: `schema.appendPdfs[${missing}]`, message: `${ids[missing]} is not a PDF asset of this project` };
  throw new AppError('ERR_TMPL_008', `Template schema validation failed: ${error.path}: ${error.message}`, { path: error.path, errors: [error] });
}
