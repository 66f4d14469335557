import Joi from 'joi';
import type { ImportFormat } from '../../domain/reporting/imports/model';

/**
 * Import form fields (docs/reporting.md "Imports"): the multipart fields besides
 * `file`, all strings on the wire; `datasourceMap` is a JSON object `{source database: datasource}`.
 */

export type DuplicateHandling = 'rename' | 'skip' | 'overwrite';

export interface ImportInput {
  format?: ImportFormat;
  datasourceId?: string;
  datasourceMap: Record<string, string>;
  duplicateHandling: DuplicateHandling;
  dryRun: boolean;
}

/** At most this many source databases in one map. */
const MAX_MAP_ENTRIES = 100;

const datasourceMap = Joi.object()
  .pattern(Joi.string().min(1).max(200), Joi.string().min(1).max(100))
  .max(MAX_MAP_ENTRIES);

/**
 * The map as an object, or as its JSON text (a multipart field is a string), which the custom rule parses: the
 * validated value is always the object, which Joi's types cannot tell from the alternatives, hence the cast.
 */
const datasourceMapField = Joi.alternatives()
  .try(datasourceMap, Joi.string().max(20_000).custom((raw: string, helpers) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return helpers.message({ custom: 'datasourceMap is not JSON' });
    }
    const { error, value } = datasourceMap.validate(parsed);
    return error ? helpers.message({ custom: `datasourceMap: ${error.message}` }) : value;
  }))
  .default({}) as unknown as Joi.ObjectSchema<Record<string, string>>;

export const importSchema = Joi.object<ImportInput, true>({
  format: Joi.string().valid('metabase', 'redash', 'jrxml'),
  datasourceId: Joi.string().max(100),
  datasourceMap: datasourceMapField,
  duplicateHandling: Joi.string().valid('rename', 'skip', 'overwrite').default('rename'),
  dryRun: Joi.boolean().truthy('1').falsy('0').default(false),
});

export interface ListImportsQuery {
  page: number;
  limit: number;
}

export const listImportsSchema = Joi.object<ListImportsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
});
