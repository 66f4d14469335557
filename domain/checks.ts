import { definitionProblems } from './flow/definition-check';
import type { GateValidationDefinition } from './flow/gate.types';
import { validateDefinition } from './templates/template-definition';
import { parseTemplateFile } from './templates/template-file';
import { validateTemplateSchema, validateTemplateVariables } from './templates/template.schema';
import { buildHtml, type BuildHtmlOptions } from './templates/build-html';
import type { ResolvedData, TemplateDefinition, TemplateSchema, TemplateType } from './templates/template.types';

/**
 * The checks of what tenants save (gate definitions with their patterns and rules, template
 * definitions, template files), and the HTML of a template. Their cost grows with the input (a 10 MB template takes about a
 * second to check), so they run in the evaluation workers like the expressions themselves
 * (Evaluator.check), under the same budget. Pure functions of JSON in, JSON out.
 */
export const CHECKS = {
  gateDefinition: (definition: GateValidationDefinition) => definitionProblems(definition),
  templateDefinition: (definition: TemplateDefinition, formats: TemplateType[]) => validateDefinition(definition, formats),
  /** POST /api/templates/validate-schema: placeholders are checked against the variables only when those are valid themselves. */
  templateSchema: (input: { schema: unknown; variables?: unknown; constants?: unknown; calculatedVariables?: unknown }, templateType: TemplateType) => {
    const given = input.variables !== undefined || input.constants !== undefined || input.calculatedVariables !== undefined;
    const context = given && validateTemplateVariables(input).valid ? (input as TemplateDefinition) : undefined;
    return validateTemplateSchema(input.schema, templateType, context);
  },
  templateVariables: (input: { variables?: unknown; constants?: unknown; calculatedVariables?: unknown }) => validateTemplateVariables(input),
  templateFile: (text: string) => parseTemplateFile(text),
  /**
   * The HTML a PDF is printed from: tenant loops and text make it (up to RENDER_HTML_MAX_BYTES), so
   * it is built here too, not on the loop that serves previews or polls the render queue.
   */
  templateHtml: (schema: TemplateSchema, data: ResolvedData, options: BuildHtmlOptions) => buildHtml(schema, data, options),
};

export type CheckName = keyof typeof CHECKS;
export type CheckArgs<N extends CheckName> = Parameters<(typeof CHECKS)[N]>;
export type CheckResult<N extends CheckName> = Awaited<ReturnType<(typeof CHECKS)[N]>>;
