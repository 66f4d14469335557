import Joi from 'joi';
import { AppError } from '../errors';
import { ASSET_REF } from './components/asset-ref';
import { OUTPUT_FORMATS, pickDefinition, validateDefinition } from './template-definition';
import type { TemplateDefinition, TemplateType, ValidationIssue } from './template.types';

/**
 * The template export/import file (docs/templates.md, "Export and import"). One JSON object:
 * the definition's four parts plus the template's name, description and output formats, and a
 * `formatVersion` so a later layout can still read files written today.
 */

const TEMPLATE_FILE_FORMAT_VERSION = 1;

export interface TemplateFile extends TemplateDefinition {
  formatVersion: number;
  exportedAt: string;
  name: string;
  description: string | null;
  outputFormats: TemplateType[];
  /** The project's assets the definition names, carried along so an import elsewhere renders the same. */
  assets?: FileAsset[];
}

/** An asset inside a template file: its bytes (base64) and the reference the definition uses for it. */
export interface FileAsset {
  ref: string;
  name: string;
  data: string;
}

/** Assets one file may carry (the file itself is bounded by UPLOAD_MAX_BYTES on import). */
const MAX_FILE_ASSETS = 50;

export function toTemplateFile(
  template: { name: string; description: string | null; outputFormats: TemplateType[]; draft: TemplateDefinition },
  now = new Date(),
  assets: FileAsset[] = [],
): TemplateFile {
  return {
    formatVersion: TEMPLATE_FILE_FORMAT_VERSION,
    exportedAt: now.toISOString(),
    name: template.name,
    description: template.description,
    outputFormats: template.outputFormats,
    ...pickDefinition(template.draft),
    ...(assets.length > 0 ? { assets } : {}),
  };
}

export interface ImportedTemplate {
  name: string;
  description: string | null;
  outputFormats: TemplateType[];
  definition: TemplateDefinition;
  assets: FileAsset[];
}

/**
 * Keys other than these (ids, slugs, timestamps a file from elsewhere may carry) are ignored:
 * an import takes a definition, never another template's identity.
 */
const fileSchema = Joi.object({
  formatVersion: Joi.number().integer().valid(TEMPLATE_FILE_FORMAT_VERSION),
  name: Joi.string().trim().min(1).max(200).required(),
  description: Joi.string().allow('', null).max(2000),
  // Files without formats (hand-written ones) render to PDF, the spec's default format.
  outputFormats: Joi.array().items(Joi.string().valid(...OUTPUT_FORMATS)).min(1).unique().default(['pdf']),
  schema: Joi.object().required(),
  variables: Joi.array(),
  constants: Joi.object(),
  calculatedVariables: Joi.array(),
  assets: Joi.array()
    .max(MAX_FILE_ASSETS)
    .items(
      Joi.object({
        ref: Joi.string().pattern(ASSET_REF, 'asset:<id>').required(),
        name: Joi.string().trim().min(1).max(200).required(),
        data: Joi.string().base64().required(),
      }).unknown(true),
    )
    .default([]),
}).unknown(true);

function invalid(errors: ValidationIssue[]): AppError {
  const first = errors[0];
  return new AppError('ERR_TMPL_010', `Import data invalid: ${first.path}: ${first.message}`, { path: first.path, errors });
}

/**
 * Reads an uploaded file: not JSON at all is ERR_TMPL_016; JSON that is not a usable template
 * (missing name or schema, or a definition the validators refuse) is ERR_TMPL_010 with every
 * problem listed, so the file can be fixed in one go.
 */
export function parseTemplateFile(text: string): ImportedTemplate {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new AppError('ERR_TMPL_016', `Invalid JSON file format: ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalid([{ path: '', message: 'the file must hold one JSON object' }]);
  }
  const { value, error } = fileSchema.validate(raw, { abortEarly: false, errors: { wrap: { label: "'" } } });
  if (error) throw invalid(error.details.map((d) => ({ path: d.path.join('.'), message: d.message })));
  const file = value as Omit<ImportedTemplate, 'definition'> & TemplateDefinition;
  const definition = pickDefinition(file);
  const check = validateDefinition(definition, file.outputFormats);
  if (!check.valid) throw invalid(check.errors);
  return { name: file.name, description: file.description || null, outputFormats: file.outputFormats, definition, assets: (value as { assets: FileAsset[] }).assets };
}
