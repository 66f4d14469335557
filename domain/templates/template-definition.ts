import { normalizeDefinition } from './definition-shapes';
import { validateTemplate } from './template.schema';
import type { TemplateDefinition, TemplateType, ValidationIssue, ValidationResult } from './template.types';

/** A stored template's definition and the formats it is rendered to, checked together. */

export const OUTPUT_FORMATS: readonly TemplateType[] = ['pdf', 'excel'];

export function isOutputFormat(value: unknown): value is TemplateType {
  return value === 'pdf' || value === 'excel';
}

/**
 * The four parts of a definition, with the optional ones present, as stored in `draft`: in the one
 * shape (items.properties as a list, pageSize given, domain/templates/definition-shapes.ts).
 */
export function pickDefinition(source: Partial<TemplateDefinition> & Pick<TemplateDefinition, 'schema'>): TemplateDefinition {
  return normalizeDefinition({
    schema: source.schema,
    variables: source.variables ?? [],
    constants: source.constants ?? {},
    calculatedVariables: source.calculatedVariables ?? [],
  });
}

/**
 * Validates a definition for every format it will be rendered to: some checks differ between
 * PDF and Excel (e.g. components Excel cannot show), and a template must be valid for each.
 * Issues reported by both passes are listed once.
 */
export function validateDefinition(def: TemplateDefinition, formats: readonly TemplateType[]): ValidationResult {
  const errors: ValidationIssue[] = [];
  const warnings: ValidationIssue[] = [];
  const seen = new Set<string>();
  const add = (list: ValidationIssue[], issues: ValidationIssue[]) => {
    for (const issue of issues) {
      const key = `${list === errors ? 'e' : 'w'}|${issue.path}|${issue.message}`;
      if (!seen.has(key)) list.push(issue);
      seen.add(key);
    }
  };
  for (const format of formats.length > 0 ? formats : ['pdf' as const]) {
    const result = validateTemplate(def, format);
    add(errors, result.errors);
    add(warnings, result.warnings);
  }
  return { valid: errors.length === 0, errors, warnings };
}
