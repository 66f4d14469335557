import Joi from 'joi';
import { escapeHtml, getPath, resolveTyped } from '../interpolate';
import { plainText } from '../format';
import type { ListProps } from '../template.types';
import type { DataContext, RenderContext } from './context';
import { dataPath } from './props';
import { dataSourceRows } from './table';

export const listProps = Joi.object({
  items: Joi.alternatives()
    .try(dataPath, Joi.array().max(10_000).items(Joi.alternatives().try(Joi.string().allow('').max(10_000), Joi.number(), Joi.boolean())))
    .required(),
  ordered: Joi.boolean().default(false),
  field: Joi.string().trim().max(500),
});

/** List entries as plain text: from an array variable (optionally one field of each element) or literals. */
export function listItems(id: string, p: ListProps, ctx: DataContext): string[] {
  const source = Array.isArray(p.items) ? p.items : dataSourceRows(p.items, ctx.scope);
  ctx.budget.consume(source.length, id);
  return source.map((el) => {
    const value = p.field ? getPath(el, p.field) : el;
    return plainText(Array.isArray(p.items) ? resolveTyped(value, ctx.scope, ctx.format).value : value);
  });
}

export function listHtml(id: string, p: ListProps, ctx: RenderContext): string {
  const tag = p.ordered ? 'ol' : 'ul';
  const items = listItems(id, p, ctx).map((t) => `<li>${escapeHtml(t)}</li>`).join('');
  return `<${tag} class="fw-list">${items}</${tag}>`;
}
