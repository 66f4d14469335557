import Joi from 'joi';
import type { RepeatProps } from '../template.types';
import type { RenderContext } from './context';
import { dataPath } from './props';
import { dataSourceRows } from './table';

export const repeatProps = Joi.object({
  dataSource: dataPath.required(),
  as: Joi.string().pattern(/^[A-Za-z_][\w]*$/).max(64).default('item'),
  // Each nested component is checked by the same walk as top-level ones (template.schema.ts).
  components: Joi.array().max(500).items(Joi.object().unknown(true)).required(),
});

/**
 * One scope per element: the element under `as` (default `item`) and `loop` with its position.
 * Charged to the loop budget up front, so a nested loop over a huge array stops before rendering.
 */
export function repeatScopes(id: string, p: RepeatProps, scope: Record<string, unknown>, budget: RenderContext['budget']) {
  const rows = dataSourceRows(p.dataSource, scope);
  budget.consume(rows.length, id);
  const as = p.as ?? 'item';
  return rows.map((el, index) => ({
    ...scope,
    [as]: el,
    loop: { index, number: index + 1, first: index === 0, last: index === rows.length - 1, count: rows.length },
  }));
}

/** The path segment of a repeat's element: hidden instances are named by these (domain/templates/visibility.ts). */
export const repeatSegment = (repeatId: string, index: number): string => `${repeatId}[${index}]/`;

export async function repeatHtml(id: string, p: RepeatProps, ctx: RenderContext): Promise<string> {
  const parts: string[] = [];
  for (const [i, scope] of repeatScopes(id, p, ctx.scope, ctx.budget).entries()) {
    parts.push(`<div class="fw-repeat-item">${await ctx.renderChildren(p.components, scope, { segment: repeatSegment(id, i) })}</div>`);
  }
  return `<div class="fw-repeat">${parts.join('')}</div>`;
}
