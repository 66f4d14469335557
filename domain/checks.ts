import { AppError } from './errors';
import { definitionProblems } from './flow/definition-check';
import { parseJsonBody } from './json-body';
import { validateSchemaSchema, validateVariablesSchema } from './templates/check-inputs';
import type { GateValidationDefinition } from './flow/gate.types';
import { isOutputFormat, validateDefinition } from './templates/template-definition';
import { parseTemplateFile } from './templates/template-file';
import { validateTemplateSchema, validateTemplateVariables } from './templates/template.schema';
import { buildHtml, type BuildHtmlOptions } from './templates/build-html';
import { hiddenComponents } from './templates/visibility';
import { checkAssetContent } from './templates/asset-content';
import type { ResolvedData, TemplateDefinition, TemplateSchema, TemplateType } from './templates/template.types';
import { checkParameterDefs, type ParameterDef, type ParameterValue } from './reporting/parameters';
import { checkQueryText, compileQuery, queryPlaceholderNames, type SqlDialect } from './reporting/sql';
import { checkHttpRequest, checkTransform, compileHttpRequest, requestPlaceholderNames, type HttpRequestSpec } from './reporting/http-request';
import { httpRows, transformedRows } from './reporting/json-rows';
import { validate } from './validation';

type TemplateParts = { variables?: unknown; constants?: unknown; calculatedVariables?: unknown };

/** POST /api/templates/validate-schema: placeholders are checked against the variables only when those are valid themselves. */
function templateSchema(input: TemplateParts & { schema: unknown }, templateType: TemplateType) {
  const given = input.variables !== undefined || input.constants !== undefined || input.calculatedVariables !== undefined;
  const context = given && validateTemplateVariables(input).valid ? (input as TemplateDefinition) : undefined;
  return validateTemplateSchema(input.schema, templateType, context);
}

/** validate-schema from the request body's bytes: parsed, its shape and templateType checked, then checked. */
function templateSchemaJson(body: Uint8Array) {
  const input = validate(validateSchemaSchema, parseJsonBody(body));
  if (!isOutputFormat(input.templateType)) throw new AppError('ERR_TMPL_009', "templateType must be 'pdf' or 'excel'", { field: 'templateType' });
  return templateSchema(input, input.templateType);
}

/**
 * The checks of what tenants save (gate definitions with their patterns and rules, template
 * definitions, template files), and the HTML of a template. Their cost grows with the input (a 10 MB template takes about a
 * second to check), so they run in the evaluation workers like the expressions themselves
 * (Evaluator.check), under the same budget. Pure functions of JSON in, JSON out.
 */
export const CHECKS = {
  gateDefinition: (definition: GateValidationDefinition) => definitionProblems(definition),
  templateDefinition: (definition: TemplateDefinition, formats: TemplateType[]) => validateDefinition(definition, formats),
  templateSchema,
  templateVariables: (input: TemplateParts) => validateTemplateVariables(input),
  /**
   * The two template checks from the bytes of a JSON request body (api/templates/check-body.ts):
   * parsing a body of several MB is work too, kept off the loop that serves HTTP.
   */
  templateSchemaJson,
  templateVariablesJson: (body: Uint8Array) => validateTemplateVariables(validate(validateVariablesSchema, parseJsonBody(body))),
  templateFile: (text: string) => parseTemplateFile(text),
  /**
   * The HTML a PDF is printed from: tenant loops and text make it (up to RENDER_HTML_MAX_BYTES), so
   * it is built here too, not on the loop that serves previews or polls the render queue.
   */
  templateHtml: (schema: TemplateSchema, data: ResolvedData, options: BuildHtmlOptions) => buildHtml(schema, data, options),
  /** A reporting query's parameter definitions and text (up to 100,000 characters scanned). */
  queryProblems: (text: string, dialect: SqlDialect, parameters: ParameterDef[]) => [...checkParameterDefs(parameters), ...checkQueryText(text, dialect, parameters)],
  /** The placeholder names of a query's text (sql, in `dialect`) or request (http), for POST /queries/validate. */
  queryPlaceholders: (text: string, dialect: SqlDialect | null, request: HttpRequestSpec | null) => (dialect ? queryPlaceholderNames(text, dialect) : requestPlaceholderNames(request)),
  /** A reporting query's text with its values as bind parameters (ERR_QRY_002/009, ERR_RPT_007). */
  compiledQuery: (text: string, dialect: SqlDialect, parameters: ParameterDef[], values: Record<string, ParameterValue | undefined>) => compileQuery(text, dialect, parameters, values),
  /** An http query's request spec and transform (http_json datasources), and the table language's transform. */
  httpRequestProblems: (request: HttpRequestSpec | null, transform: string | null, parameters: ParameterDef[]) => [...checkParameterDefs(parameters), ...checkHttpRequest(request, transform, parameters)],
  transformProblems: (transform: string | null, parameters: ParameterDef[]) => [...checkParameterDefs(parameters), ...checkTransform(transform)],
  /** The request an http query sends, values substituted (ERR_QRY_002, ERR_RPT_007). */
  compiledHttpRequest: (request: HttpRequestSpec, transform: string | null, parameters: ParameterDef[], values: Record<string, ParameterValue | undefined>) =>
    compileHttpRequest(request, transform, parameters, values),
  /**
   * Tenant JSONata over a query's data (rowsPath, transform): the worker appends the task's CPU
   * budget as the last argument (BUDGETED_CHECKS), so pass exactly the one input.
   */
  httpRows,
  transformedRows,
  /** The component instances a template's `visibleIf` conditions hide, for both renderers (tenant JSONata: budgeted). */
  hiddenComponents,
  /** An uploaded image or font judged by its bytes, an SVG cleaned (templates/asset-content.ts). */
  assetContent: (bytes: Uint8Array) => checkAssetContent(bytes),
};

/** Checks that take the worker's CPU budget as a last argument after their input. */
export const BUDGETED_CHECKS: ReadonlySet<string> = new Set(['httpRows', 'transformedRows', 'hiddenComponents']);

export type CheckName = keyof typeof CHECKS;
export type CheckArgs<N extends CheckName> = Parameters<(typeof CHECKS)[N]>;
export type CheckResult<N extends CheckName> = Awaited<ReturnType<(typeof CHECKS)[N]>>;
