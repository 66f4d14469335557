import jsonata from 'jsonata';
import { cpuTimedJsonataOptions, startCpuBudget, type CpuBudget } from '../cpu-budget';
import { AppError } from '../errors';
import { JSONATA_REGEX } from '../user-regex';
import { anyComponent, childLists, isComponentType, normalizeProps } from './components/registry';
import { repeatScopes, repeatSegment } from './components/repeat';
import { LoopBudget } from './loop-budget';
import type { Component, RepeatProps, ResolvedData, TemplateSchema } from './template.types';
import { JSONATA_GUARDRAILS, toJson } from './variables';

/**
 * `visibleIf` (docs/templates.md "Layout and style"): a JSONata condition on any component over the
 * variables, constants, calculated values and, inside a repeat, its bindings. Evaluated here, in the
 * evaluation workers (domain/checks.ts `hiddenComponents`, under the task's CPU budget, like calculated
 * variables), before either renderer runs; the renderers then skip the component instances named.
 *
 * An instance is named by its path: `<repeat id>[<index>]/` for each repeat around it, then its id
 * (`orders[2]/discount`). A hidden container hides all it holds; nothing inside it is evaluated.
 */

export interface VisibilityInput {
  schema: TemplateSchema;
  data: ResolvedData;
  maxLoopIterations: number;
}

/** Whether any component of the schema has a condition: only then is the check worth a trip to the workers. */
export function hasConditions(schema: TemplateSchema): boolean {
  return anyComponent([...schema.sections.map((s) => s.components), ...pageAreas(schema)], (_c, props) => typeof props.visibleIf === 'string' && props.visibleIf.trim() !== '');
}

/** The component areas of the header and footer and their first-page variants (their instances have top-level paths too). */
const pageAreas = (schema: TemplateSchema): Component[][] =>
  [schema.header, schema.footer, schema.header?.firstPage, schema.footer?.firstPage].map((area) => area?.components).filter((c): c is Component[] => Array.isArray(c));

/** JSONata's own truth (`$boolean`): empty strings, zero, empty arrays, null and false are false. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(truthy);
  if (value && typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

/** The paths of the component instances whose `visibleIf` is false. */
export async function hiddenComponents(input: VisibilityInput, budget: CpuBudget = startCpuBudget(1000)): Promise<string[]> {
  const hidden: string[] = [];
  const loops = new LoopBudget(input.maxLoopIterations);
  const compiled = new Map<string, { evaluate(scope: unknown): Promise<unknown> }>();
  const condition = (id: string, expression: string) => {
    const known = compiled.get(expression);
    if (known) return known;
    const timed = cpuTimedJsonataOptions({ ...JSONATA_GUARDRAILS, ...JSONATA_REGEX });
    let expr: ReturnType<typeof jsonata>;
    try {
      expr = jsonata(expression, timed.options);
    } catch (err) {
      throw new AppError('ERR_TMPL_008', `Component '${id}': visibleIf does not parse: ${(err as Error).message}`, { componentId: id, field: 'visibleIf' });
    }
    const entry = {
      evaluate(scope: unknown) {
        timed.use(budget);
        return expr.evaluate(scope);
      },
    };
    compiled.set(expression, entry);
    return entry;
  };

  const walk = async (components: Component[], scope: Record<string, unknown>, path: string): Promise<void> => {
    for (const c of components) {
      if (!isComponentType(c.type)) continue;
      const props = normalizeProps(c);
      const expression = typeof props.visibleIf === 'string' ? props.visibleIf.trim() : '';
      if (expression) {
        let result: unknown;
        try {
          result = await condition(c.id, expression).evaluate(scope);
        } catch (err) {
          const e = err as { code?: string; message?: string };
          if (e instanceof AppError) throw e;
          if (e.code === 'D1012') {
            throw new AppError('ERR_LIMIT_008', `Component '${c.id}': visibleIf exceeded the evaluation budget (${budget.budgetMs} ms)`, { componentId: c.id, field: 'visibleIf', limitMs: budget.budgetMs });
          }
          throw new AppError('ERR_TMPL_008', `Component '${c.id}': visibleIf failed: ${e.message ?? 'evaluation failed'}`, { componentId: c.id, field: 'visibleIf' });
        }
        if (!truthy(result)) {
          hidden.push(path + c.id);
          continue;
        }
      }
      if (c.type === 'repeat') {
        const scopes = repeatScopes(c.id, props as unknown as RepeatProps, scope, loops);
        for (const [i, inner] of scopes.entries()) await walk((props as unknown as RepeatProps).components, inner, path + repeatSegment(c.id, i));
      } else {
        for (const children of childLists(c.type, props)) await walk(children as Component[], scope, path);
      }
    }
  };

  // JSONata sees JSON (dates as ISO strings), as calculated variables do.
  const data = toJson(input.data) as Record<string, unknown>;
  for (const components of [...input.schema.sections.map((s) => s.components), ...pageAreas(input.schema)]) await walk(components, data, '');
  return hidden;
}
