import { createHash } from 'node:crypto';
import { recordActivity } from '../../db/identity/activity';
import { TemplateEntity } from '../../db/templates/template.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import { updateTemplateRow } from '../../db/templates/template-rows';
import type { PreviewDocument, PreviewRenderer } from '../../platform/worker-previews';
import type { WorkbookGrid } from '../../domain/documents/previews';
import { AppError } from '../../domain/errors';
import { automationFields, type AutomationField } from '../../domain/templates/automation-fields';
import { resolveVariables } from '../../domain/templates/variables';
import { toTemplateFile, type ImportedTemplate, type TemplateFile } from '../../domain/templates/template-file';
import { assetContents, assetsNamedBy } from '../../db/templates/asset-rows';
import { insertAsset, type AssetDeps } from '../assets/assets.service';
import type { TemplateDefinition, TemplateType } from '../../domain/templates/template.types';
import type { DuplicateHandling, PreviewInput } from './templates.schema';
import { type Actor, freeName, insertTemplate, type TemplateDeps } from './template-store.service';
import { checkOutput } from '../../domain/documents/output';
import { checkAcceptance, type AcceptanceLimits } from '../../domain/documents/acceptance';

/** Moving templates in and out: export and import files, preview renders, automation fields. */

type AssetLimits = AssetDeps['limits'];

/** The file carries the project's assets the draft names (bytes as base64), so an import elsewhere renders the same. */
export async function exportTemplate(deps: TemplateDeps, projectId: string, ref: string): Promise<{ slug: string; file: TemplateFile }> {
  const template = await findTemplate(deps.db, projectId, ref);
  const named = await assetsNamedBy(deps.db, projectId, template.draft.schema);
  const contents = await assetContents(deps.db, projectId, named.map((a) => a.id));
  const assets = named.filter((a) => contents.has(a.id)).map((a) => ({ ref: `asset:${a.id}`, name: a.name, data: contents.get(a.id)!.toString('base64') }));
  return { slug: template.slug, file: toTemplateFile(template, new Date(), assets) };
}

/**
 * The assets a template file carries, made the importing project's own: each checked as an upload
 * is (asset-content.ts), one the project already holds (same bytes) reused, the others stored within
 * the project's quota; answers the definition with its `asset:` references pointing at them.
 */
async function importAssets(deps: TemplateDeps, limits: AssetLimits, actor: Actor, file: ImportedTemplate): Promise<TemplateDefinition> {
  if (file.assets.length === 0) return file.definition;
  // All checked before any is stored: a bad one fails the import with nothing left behind.
  const checked = [];
  for (const asset of file.assets) checked.push({ asset, content: await deps.evaluator.check(actor.projectId, 'assetContent', new Uint8Array(Buffer.from(asset.data, 'base64'))) });
  const renamed = new Map<string, string>();
  for (const { asset, content } of checked) {
    const sha256 = createHash('sha256').update(content.bytes).digest('hex');
    const [held] = await deps.db.query(`SELECT id FROM template_assets WHERE project_id = $1 AND sha256 = $2 AND kind = $3 ORDER BY created_at LIMIT 1`, [actor.projectId, sha256, content.kind]);
    const id = held?.id ?? (await deps.db.transaction((m) => insertAsset(m, limits, actor, content, asset.name))).id;
    renamed.set(asset.ref.slice('asset:'.length).toLowerCase(), id);
  }
  // Ids are UUIDs: an `asset:<id>` text names that asset and nothing else.
  const json = JSON.stringify(file.definition).replace(/asset:([0-9a-fA-F-]{36})/g, (whole, id: string) => (renamed.has(id.toLowerCase()) ? `asset:${renamed.get(id.toLowerCase())}` : whole));
  return JSON.parse(json) as TemplateDefinition;
}

export interface ImportResult {
  status: 'created' | 'skipped' | 'overwritten';
  templateId: string;
  message: string;
}

/**
 * Imports a template file as a new, unpublished draft. "Duplicate" means a live template of the
 * project with the same name (names are unique per project): `rename` imports it as `Name (2)`,
 * `skip` leaves the existing one alone, `overwrite` replaces the existing template's draft (its
 * published versions stay; publish to make the import live).
 */
export async function importTemplate(deps: TemplateDeps, assetLimits: AssetLimits, actor: Actor, text: string, handling: DuplicateHandling): Promise<ImportResult> {
  const file = await deps.evaluator.check(actor.projectId, 'templateFile', text);
  const existing = await findByName(deps, actor.projectId, file.name);
  if (existing && handling === 'skip') {
    return { status: 'skipped', templateId: existing.id, message: `A template named '${existing.name}' exists; nothing was imported` };
  }
  const fields = { description: file.description, outputFormats: file.outputFormats, draft: await importAssets(deps, assetLimits, actor, file) };
  if (existing && handling === 'overwrite') {
    await overwriteDraft(deps, actor, existing.id, fields);
    return { status: 'overwritten', templateId: existing.id, message: `The draft of '${existing.name}' was replaced by the imported template` };
  }
  const rename = () => freeName(deps.db, actor.projectId, file.name);
  const name = existing ? await rename() : file.name;
  const created = await insertTemplate(deps, actor, { name, folderId: null, ...fields }, { rename, activity: { source: 'import' } });
  const renamed = created.name === file.name ? '' : ` as '${created.name}'`;
  return { status: 'created', templateId: created.id, message: `Template imported${renamed}` };
}

async function findByName(deps: TemplateDeps, projectId: string, name: string): Promise<TemplateEntity | undefined> {
  const found = await deps.db
    .getRepository(TemplateEntity)
    .createQueryBuilder('t')
    .where('t.projectId = :projectId AND t.deletedAt IS NULL AND lower(t.name) = lower(:name)', { projectId, name })
    .getOne();
  return found ?? undefined;
}

async function overwriteDraft(
  deps: TemplateDeps,
  actor: Actor,
  id: string,
  fields: Pick<TemplateEntity, 'description' | 'outputFormats' | 'draft'>,
): Promise<void> {
  await deps.db.transaction(async (m) => {
    const template = await findTemplate(m, actor.projectId, id, { lock: true });
    await updateTemplateRow(m, template.id, { ...fields, updatedAt: new Date() });
    await recordActivity(m, {
      projectId: actor.projectId,
      userId: actor.userId ?? null,
      type: 'template_updated',
      data: { template: { id: template.id, name: template.name }, changes: ['description', 'outputFormats', 'schema', 'variables', 'constants', 'calculatedVariables'], source: 'import' },
    });
  });
}

export interface PreviewDeps extends TemplateDeps {
  /** Renders on the render worker role (platform/worker-previews.ts). */
  render: PreviewRenderer;
  /** What the variables may hold, checked before the render as on generation (docs/documents.md "Checks at acceptance"). */
  acceptance: AcceptanceLimits;
}

/**
 * Renders the draft (contract §3) with the given variables. Render errors keep their codes
 * (ERR_VALID_002/005, ERR_LIMIT_001/003/007). Previews carry the free-quota watermark: they cost
 * no quota, so an unmarked preview would be free generation by another door.
 */
export async function previewTemplate(
  deps: PreviewDeps,
  projectId: string,
  ref: string,
  input: PreviewInput,
  view?: 'grid',
): Promise<{ template: TemplateEntity; document: PreviewDocument }> {
  const template = await findTemplate(deps.db, projectId, ref);
  const format = input.format ?? defaultFormat(template.outputFormats);
  if (!template.outputFormats.includes(format)) {
    throw new AppError('ERR_TMPL_009', `This template renders to ${template.outputFormats.join(' and ')}, not ${format}`, {
      field: 'format',
      outputFormats: template.outputFormats,
    });
  }
  // The same combinations are refused as on generation (400 ERR_VALID_001 naming output.<field>).
  checkOutput(format, input.output);
  checkAcceptance(template.draft, input.variables ?? {}, format, deps.acceptance, 'variables.');
  const document = await deps.render({
    tenant: projectId,
    template: template.draft,
    variables: input.variables ?? {},
    format,
    watermark: true,
    title: template.name,
    ...(input.output ? { output: input.output } : {}),
    ...(view ? { view } : {}),
  });
  return { template, document };
}

/**
 * The workbook an `excel` template's draft makes, as a grid a browser can show (docs/templates.md
 * "Preview"): the same render, limits and budget as the file, read back on the render worker.
 */
export async function previewTemplateGrid(deps: PreviewDeps, projectId: string, ref: string, variables: Record<string, unknown> | undefined): Promise<WorkbookGrid> {
  const { document } = await previewTemplate(deps, projectId, ref, { format: 'excel', ...(variables ? { variables } : {}) }, 'grid');
  return JSON.parse(document.body.toString('utf8')) as WorkbookGrid;
}

/**
 * The draft's calculated variables evaluated with the given variables, as a render would see them
 * (docs/templates.md "Calculated variables"): in the evaluation workers under the document's budget;
 * a missing required variable is 400 ERR_VALID_005, a failing expression ERR_VALID_002, one past the
 * budget ERR_LIMIT_008, each naming the variable. The designer shows each value beside its variable.
 */
export async function calculateTemplate(deps: TemplateDeps, projectId: string, ref: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
  const template = await findTemplate(deps.db, projectId, ref);
  const calculated = template.draft.calculatedVariables ?? [];
  const data = await resolveVariables(template.draft, variables, (list, scope) => deps.evaluator.calculate({ tenant: projectId, calculated: list, scope }));
  return Object.fromEntries(calculated.map((c) => [c.name, data[c.name] ?? null]));
}

/** The largest sample data kept with a template, as JSON. */
const SAMPLE_DATA_MAX_BYTES = 256 * 1024;

/** A template's sample data (docs/templates.md "Checks, automation fields, analytics"): `{}` when none was kept. */
export async function templateSampleData(deps: TemplateDeps, projectId: string, ref: string): Promise<Record<string, unknown>> {
  const template = await findTemplate(deps.db, projectId, ref);
  const rows: Array<{ sample_data: Record<string, unknown> | null }> = await deps.db.query(`SELECT sample_data FROM templates WHERE id = $1`, [template.id]);
  return rows[0]?.sample_data ?? {};
}

/**
 * Keeps the sample data with the template. It is the editors' state, not the template's: the
 * definition, its versions and `updatedAt` stay as they are, and no activity is recorded.
 */
export async function keepSampleData(deps: TemplateDeps, projectId: string, ref: string, data: Record<string, unknown>): Promise<void> {
  const json = JSON.stringify(data);
  if (Buffer.byteLength(json) > SAMPLE_DATA_MAX_BYTES) {
    throw new AppError('ERR_REQ_002', `Sample data is kept up to ${SAMPLE_DATA_MAX_BYTES / 1024} KB of JSON`, { field: 'data', limit: SAMPLE_DATA_MAX_BYTES });
  }
  const template = await findTemplate(deps.db, projectId, ref);
  await deps.db.query(`UPDATE templates SET sample_data = $2::jsonb WHERE id = $1`, [template.id, json]);
}

/** The spec's default is PDF; a template made for Excel only previews as Excel. */
function defaultFormat(formats: TemplateType[]): TemplateType {
  return formats.includes('pdf') ? 'pdf' : formats[0];
}

/**
 * Fields of the version generation would use (the newest published one), so an automation built
 * on them matches what it will run; a template never published answers its draft's fields, so
 * the automation can be set up before the first publish.
 */
export async function templateAutomationFields(deps: TemplateDeps, projectId: string, ref: string): Promise<AutomationField[]> {
  const template = await findTemplate(deps.db, projectId, ref);
  if (template.latestVersion < 1) return automationFields(template.draft);
  const rows: Array<{ definition: TemplateEntity['draft'] }> = await deps.db.query(
    `SELECT definition FROM template_versions WHERE template_id = $1 AND version = $2`,
    [template.id, template.latestVersion],
  );
  return automationFields(rows[0]?.definition ?? template.draft);
}
