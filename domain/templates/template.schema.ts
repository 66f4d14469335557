import Joi from 'joi';
import { childLists, COMPONENTS, CONTAINER_TYPES, isComponentType } from './components/registry';
import { cssSchema, themeSchema } from './components/style';
import { checkBarcode, isLiteral } from './components/barcode';
import { length } from './components/props';
import { ASSET_ID } from './components/asset-ref';
import { crossCheckTemplate, type ComponentVisit, type NameContext, nameContext } from './template-checks';
import { jsonataProblems } from '../user-regex';
import { applyVariableInput } from './variables';
import { DEFAULT_PAGE_SIZE, normalizeVariables } from './definition-shapes';
import {
  COMPONENT_TYPES,
  MAX_NESTING_DEPTH,
  PAGE_SIZES,
  VARIABLE_TYPES,
  type BarcodeProps,
  type CalculatedVariable,
  type Component,
  type Constants,
  type TemplateDefinition,
  type TemplateType,
  type TemplateVariable,
  type ValidationIssue,
  type ValidationResult,
} from './template.types';

/**
 * Validation of a template definition before it is saved (and before a preview). Errors make a
 * template unusable; warnings point at likely mistakes that still render.
 */

const MAX_REPEAT_DEPTH = 5;
const MAX_COMPONENTS = 2000;
const NAME = Joi.string().pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, 'identifier (letters, digits, _)').max(100);
const ID = Joi.string().pattern(/^[A-Za-z0-9_-]+$/, 'id (letters, digits, - and _)').max(100);
const slot = Joi.string().allow('').max(1000);
// Three text slots, or a component area (its components are checked by the walk below); either may
// carry a first-page variant of either form (`firstPage: {components: []}` prints nothing on page 1).
const slots = { left: slot, center: slot, right: slot };
const area = { components: Joi.array().max(50).items(Joi.any()).required() };
const pageArea = Joi.alternatives().try(Joi.object(slots), Joi.object(area));
const headerFooter = Joi.alternatives().try(Joi.object({ ...slots, firstPage: pageArea }), Joi.object({ ...area, firstPage: pageArea }));

const templateSchemaSchema = Joi.object({
  // Spec: A4 unless the template says otherwise (stored definitions get it filled in, definition-shapes.ts).
  pageSize: Joi.string().valid(...PAGE_SIZES).default(DEFAULT_PAGE_SIZE),
  orientation: Joi.string().valid('portrait', 'landscape'),
  theme: themeSchema,
  css: cssSchema,
  margins: Joi.object({ top: length, right: length, bottom: length, left: length }),
  header: headerFooter,
  footer: headerFooter,
  locale: Joi.string().max(35).custom((v: string) => {
    if (Intl.NumberFormat.supportedLocalesOf([v]).length === 0) throw new Error('unsupported locale');
    return v;
  }),
  currency: Joi.string().pattern(/^[A-Z]{3}$/, 'ISO 4217 code'),
  // Seen in the original product's stored templates; kept, never interpreted.
  format: Joi.string().max(50),
  // The project's PDF assets appended to every PDF (template-store.service.ts checks they are).
  appendPdfs: Joi.array().items(Joi.string().pattern(new RegExp(`^${ASSET_ID}$`), 'asset id')).max(10).unique(),
  sections: Joi.array()
    .min(1)
    .max(200)
    .items(
      Joi.object({
        id: ID.required(),
        title: Joi.string().allow('').max(1000),
        // Components are checked one by one below, so errors name the component and its type.
        components: Joi.array().max(MAX_COMPONENTS).items(Joi.any()).required(),
      }),
    )
    .required(),
});

const field = Joi.object({
  name: NAME.required(),
  type: Joi.string().valid(...VARIABLE_TYPES).required(),
  required: Joi.boolean().default(false),
  description: Joi.string().allow('').max(1000),
});

/**
 * An array variable's element fields: a list of fields, or (as Flow's ObjectSchema writes them) a
 * map from field name to field; stored definitions hold the list (definition-shapes.ts).
 */
const itemFields = Joi.alternatives().conditional(Joi.array(), {
  then: Joi.array().max(200).items(field),
  otherwise: Joi.object().max(200).pattern(NAME, field.keys({ name: Joi.forbidden() })),
});

const variableSchema = field.keys({
  defaultValue: Joi.any(),
  items: Joi.object({ type: Joi.string().valid(...VARIABLE_TYPES).required(), properties: itemFields }),
});

const calculatedVariableSchema = Joi.object({
  name: NAME.required(),
  expression: Joi.string().min(1).max(10_000).required(),
});

const JOI_OPTIONS: Joi.ValidationOptions = { abortEarly: false, errors: { wrap: { label: "'" } } };

function joinPath(prefix: string, segments: ReadonlyArray<string | number>): string {
  return segments.reduce<string>(
    (acc, s) => (typeof s === 'number' ? `${acc}[${s}]` : acc ? `${acc}.${s}` : String(s)),
    prefix,
  );
}

function joiIssues(error: Joi.ValidationError | undefined, prefix = ''): ValidationIssue[] {
  return (error?.details ?? []).map((d) => ({ path: joinPath(prefix, d.path), message: d.message }));
}

function result(errors: ValidationIssue[], warnings: ValidationIssue[]): ValidationResult {
  return { valid: errors.length === 0, errors, warnings };
}

/** Checks each component's shape and props, recursing into containers; reports every component it accepted. */
function walkComponents(
  components: unknown[],
  path: string,
  aliases: string[],
  errors: ValidationIssue[],
  visits: ComponentVisit[],
  ids: Set<string>,
  depth = 0,
): void {
  components.forEach((raw, i) => {
    const at = `${path}[${i}]`;
    const shape = Joi.object({ id: ID.required(), type: Joi.string().required(), props: Joi.object().default({}) });
    const { value, error } = shape.validate(raw, JOI_OPTIONS);
    if (error) return void errors.push(...joiIssues(error, at));
    const c = value as Component;
    if (ids.has(c.id)) errors.push({ path: `${at}.id`, message: `duplicate component id '${c.id}'` });
    ids.add(c.id);
    if (!isComponentType(c.type)) {
      errors.push({ path: `${at}.type`, message: `unknown component type '${c.type}' (known: ${COMPONENT_TYPES.join(', ')})` });
      return;
    }
    const props = COMPONENTS[c.type].props.validate(c.props, JOI_OPTIONS);
    if (props.error) return void errors.push(...joiIssues(props.error, `${at}.props`));
    const normalized = { ...c, props: props.value as Record<string, unknown> };
    if (typeof normalized.props.visibleIf === 'string' && normalized.props.visibleIf.trim() !== '') {
      for (const problem of jsonataProblems(normalized.props.visibleIf)) errors.push({ path: `${at}.props.visibleIf`, message: `visibleIf ${problem}` });
    }
    if (c.type === 'barcode' && isLiteral(String(normalized.props.value))) {
      try {
        checkBarcode(c.id, normalized.props as unknown as BarcodeProps, String(normalized.props.value));
      } catch (err) {
        errors.push({ path: `${at}.props.value`, message: (err as Error).message });
      }
    }
    visits.push({ component: normalized, path: at, aliases });
    if (!CONTAINER_TYPES.has(c.type)) return;
    if (depth >= MAX_NESTING_DEPTH) {
      errors.push({ path: at, message: `containers (repeat, columns, box) nested deeper than ${MAX_NESTING_DEPTH} levels` });
      return;
    }
    if (c.type === 'repeat') {
      if (aliases.length >= MAX_REPEAT_DEPTH) {
        errors.push({ path: at, message: `repeat nested deeper than ${MAX_REPEAT_DEPTH} levels` });
        return;
      }
      const as = String(normalized.props.as ?? 'item');
      walkComponents(normalized.props.components as unknown[], `${at}.props.components`, [...aliases, as], errors, visits, ids, depth + 1);
      return;
    }
    childLists(c.type, normalized.props).forEach((children, k) => {
      const where = c.type === 'columns' ? `${at}.props.columns[${k}].components` : `${at}.props.components`;
      walkComponents(children, where, aliases, errors, visits, ids, depth + 1);
    });
  });
}

/**
 * A template's `schema`. With `context` (the template's variables, constants and calculated
 * variables) it also checks that data sources name arrays and that placeholders name something.
 */
export function validateTemplateSchema(
  schema: unknown,
  templateType: TemplateType,
  context?: Pick<TemplateDefinition, 'variables' | 'constants' | 'calculatedVariables'>,
): ValidationResult {
  const warnings: ValidationIssue[] = [];
  if (templateType !== 'pdf' && templateType !== 'excel') {
    return result([{ path: 'templateType', message: "templateType must be 'pdf' or 'excel'" }], warnings);
  }
  const { value, error } = templateSchemaSchema.validate(schema, JOI_OPTIONS);
  const errors = joiIssues(error);
  if (error && !Array.isArray((schema as { sections?: unknown } | null)?.sections)) return result(errors, warnings);
  const sections = ((value ?? schema) as { sections: Array<{ components?: unknown }> }).sections;
  const visits: ComponentVisit[] = [];
  const ids = new Set<string>();
  sections.forEach((s, i) => {
    if (Array.isArray(s?.components)) walkComponents(s.components, `sections[${i}].components`, [], errors, visits, ids);
  });
  for (const part of ['header', 'footer'] as const) {
    const area = ((value ?? schema) as Record<string, { components?: unknown; firstPage?: { components?: unknown } } | undefined>)[part];
    if (Array.isArray(area?.components)) walkComponents(area.components, `${part}.components`, [], errors, visits, ids);
    if (Array.isArray(area?.firstPage?.components)) walkComponents(area.firstPage.components, `${part}.firstPage.components`, [], errors, visits, ids);
  }
  if (visits.length > MAX_COMPONENTS) errors.push({ path: 'sections', message: `more than ${MAX_COMPONENTS} components` });
  const names: NameContext | undefined = context
    ? nameContext({ ...context, variables: normalizeVariables(context.variables ?? []) as TemplateVariable[] })
    : undefined;
  crossCheckTemplate(value ?? schema, visits, templateType, names, errors, warnings);
  return result(errors, warnings);
}

export function validateTemplateVariables(input: {
  variables?: unknown;
  constants?: unknown;
  calculatedVariables?: unknown;
}): ValidationResult {
  const errors: ValidationIssue[] = [];
  const warnings: ValidationIssue[] = [];
  const seen = new Map<string, string>();
  const claim = (name: string, path: string) => {
    const first = seen.get(name);
    if (first) errors.push({ path, message: `duplicate name '${name}' (already used at ${first})` });
    else seen.set(name, path);
  };

  // items.properties may be a map as in Flow's ObjectSchema; checked (and reported) as the list it stands for.
  const vars = Joi.array().max(500).items(Joi.any()).validate(normalizeVariables(input.variables ?? []), JOI_OPTIONS);
  errors.push(...joiIssues(vars.error, 'variables'));
  ((vars.value as unknown[]) ?? []).forEach((raw, i) => {
    const at = `variables[${i}]`;
    const { value, error } = variableSchema.validate(raw, JOI_OPTIONS);
    if (error) return void errors.push(...joiIssues(error, at));
    const v = value as TemplateVariable;
    claim(v.name, at);
    if (v.name === 'item' || v.name === 'loop') {
      warnings.push({ path: `${at}.name`, message: `'${v.name}' is hidden inside repeat components, which bind that name` });
    }
    if (v.items && v.type !== 'array') warnings.push({ path: `${at}.items`, message: 'items only applies to array variables' });
    if (v.defaultValue !== undefined && v.defaultValue !== null) {
      try {
        applyVariableInput([v], {});
      } catch (err) {
        errors.push({ path: `${at}.defaultValue`, message: (err as Error).message.replace(/^Variable/, 'Default value of') });
      }
      if (v.required) warnings.push({ path: `${at}.required`, message: 'a required variable with a default value is never missing' });
    }
  });

  const consts = Joi.object().pattern(NAME, Joi.any()).validate(input.constants ?? {}, JOI_OPTIONS);
  errors.push(...joiIssues(consts.error, 'constants'));
  if (!consts.error) Object.keys(consts.value as Constants).forEach((k) => claim(k, `constants.${k}`));

  const calcs = Joi.array().max(200).items(calculatedVariableSchema).validate(input.calculatedVariables ?? [], JOI_OPTIONS);
  errors.push(...joiIssues(calcs.error, 'calculatedVariables'));
  if (!calcs.error) {
    (calcs.value as CalculatedVariable[]).forEach((c, i) => {
      const at = `calculatedVariables[${i}]`;
      claim(c.name, at);
      for (const problem of jsonataProblems(c.expression)) errors.push({ path: `${at}.expression`, message: `JSONata ${problem}` });
    });
  }
  return result(errors, warnings);
}

/** Both checks on a whole definition, with the cross-references between them. */
export function validateTemplate(def: TemplateDefinition, templateType: TemplateType): ValidationResult {
  const vars = validateTemplateVariables(def);
  const schema = validateTemplateSchema(def.schema, templateType, vars.valid ? def : undefined);
  return result([...vars.errors, ...schema.errors.map((e) => ({ ...e, path: `schema.${e.path}` }))], [
    ...vars.warnings,
    ...schema.warnings.map((w) => ({ ...w, path: w.path.startsWith('variables') ? w.path : `schema.${w.path}` })),
  ]);
}
