import Joi from 'joi';
import { AppError } from '../../errors';
import type { Component, ComponentType } from '../template.types';
import type { RenderContext } from './context';
import { barcodeHtml, barcodeProps } from './barcode';
import { chartHtml, chartProps } from './chart';
import { boxHtml, boxProps, columnsHtml, columnsProps } from './containers';
import { imageHtml, imageProps } from './image';
import { htmlHtml, htmlProps, markdownHtml, markdownProps } from './rich-text';
import { keyValueHtml, keyValueProps } from './key-value';
import { dividerHtml, dividerProps, pageBreakHtml, pageBreakProps, spacerHtml, spacerProps } from './layout';
import { listHtml, listProps } from './list';
import { qrcodeHtml, qrcodeProps } from './qrcode';
import { repeatHtml, repeatProps } from './repeat';
import { headingHtml, headingProps, textHtml, textProps } from './text';
import { tableHtml, tableProps } from './table';
import { tocHtml, tocProps } from './toc';

/**
 * The component catalogue: each type's props schema and its HTML. The Excel renderer
 * (activities/rendering) reads the same props through the data helpers next to each html().
 */
export interface ComponentDefinition {
  props: Joi.ObjectSchema;
  // Props reach html() only after the props schema validated them (defaults applied).
  html(id: string, props: any, ctx: RenderContext): string | Promise<string>;
}

/**
 * What every component takes beside its own props (docs/templates.md "Layout and style"):
 * `visibleIf` (a JSONata condition, domain/templates/visibility.ts), `keepTogether` (not split
 * across pages) and `pageBreak` (`before` or `after` it).
 */
const COMMON_PROPS = { visibleIf: Joi.string().allow('').max(2000), keepTogether: Joi.boolean(), pageBreak: Joi.string().valid('before', 'after') };
const withCommon = (props: Joi.ObjectSchema): Joi.ObjectSchema => props.keys(COMMON_PROPS);

/** Components that only wrap their children's HTML: the HTML budget charges the children, not them again. */
export const CONTAINER_TYPES: ReadonlySet<ComponentType> = new Set<ComponentType>(['repeat', 'columns', 'box']);

/** The child component lists of a container's (normalized or raw) props: where a walk goes next. */
export function childLists(type: ComponentType, props: Record<string, unknown>): unknown[][] {
  if (type === 'repeat' || type === 'box') return Array.isArray(props.components) ? [props.components] : [];
  if (type === 'columns' && Array.isArray(props.columns)) {
    return props.columns.map((c) => (Array.isArray((c as { components?: unknown } | null)?.components) ? (c as { components: unknown[] }).components : []));
  }
  return [];
}

/** Whether any component in the lists (containers' children included) passes `test`: a walk over raw, unvalidated trees. */
export function anyComponent(lists: readonly Component[][], test: (component: Component, props: Record<string, unknown>) => boolean): boolean {
  const walk = (components: Component[]): boolean =>
    components.some((c) => {
      const props = (c?.props ?? {}) as Record<string, unknown>;
      return test(c, props) || (isComponentType(c?.type) && childLists(c.type, props).some((children) => Array.isArray(children) && walk(children as Component[])));
    });
  return lists.some((components) => Array.isArray(components) && walk(components));
}

export const COMPONENTS: Record<ComponentType, ComponentDefinition> = {
  heading: { props: withCommon(headingProps), html: (_id, p, ctx) => headingHtml(p, ctx) },
  text: { props: withCommon(textProps), html: (_id, p, ctx) => textHtml(p, ctx) },
  table: { props: withCommon(tableProps), html: tableHtml },
  image: { props: withCommon(imageProps), html: (_id, p, ctx) => imageHtml(p, ctx) },
  list: { props: withCommon(listProps), html: listHtml },
  keyValue: { props: withCommon(keyValueProps), html: (_id, p, ctx) => keyValueHtml(p, ctx) },
  divider: { props: withCommon(dividerProps), html: dividerHtml },
  spacer: { props: withCommon(spacerProps), html: (_id, p) => spacerHtml(p) },
  pageBreak: { props: withCommon(pageBreakProps), html: pageBreakHtml },
  qrcode: { props: withCommon(qrcodeProps), html: (_id, p, ctx) => qrcodeHtml(p, ctx) },
  repeat: { props: withCommon(repeatProps), html: repeatHtml },
  columns: { props: withCommon(columnsProps), html: columnsHtml },
  box: { props: withCommon(boxProps), html: boxHtml },
  barcode: { props: withCommon(barcodeProps), html: barcodeHtml },
  markdown: { props: withCommon(markdownProps), html: (_id, p, ctx) => markdownHtml(p, ctx) },
  html: { props: withCommon(htmlProps), html: (_id, p, ctx) => htmlHtml(p, ctx) },
  chart: { props: withCommon(chartProps), html: chartHtml },
  toc: { props: withCommon(tocProps), html: (_id, p, ctx) => tocHtml(p, ctx) },
};

export function isComponentType(type: unknown): type is ComponentType {
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(COMPONENTS, type);
}

const normalized = new WeakMap<Component, Record<string, unknown>>();

/**
 * Props with the schema's defaults applied. Stored templates were validated on save; this keeps
 * rendering safe for anything that slipped past (unknown keys are dropped, bad values throw).
 */
export function normalizeProps(component: Component): Record<string, unknown> {
  // A component inside a repeat renders once per element: validate its props once.
  const cached = normalized.get(component);
  if (cached) return cached;
  const def = COMPONENTS[component.type];
  const { value, error } = def.props.validate(component.props ?? {}, { stripUnknown: true, abortEarly: true });
  if (error) {
    throw new AppError('ERR_TMPL_008', `Component '${component.id}': ${error.message}`, {
      componentId: component.id,
      path: error.details[0]?.path.join('.'),
    });
  }
  normalized.set(component, value as Record<string, unknown>);
  return value as Record<string, unknown>;
}
