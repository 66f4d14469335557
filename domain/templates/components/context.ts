import type { FormatOptions } from '../format';
import type { LoopBudget } from '../loop-budget';
import type { Component } from '../template.types';
import type { Outline } from './toc';

/** What a component sees while it renders: data in scope and the document-wide limits. */
export interface RenderContext {
  /** Variables, constants, calculated values, plus loop bindings inside a repeat. */
  scope: Record<string, unknown>;
  format: FormatOptions;
  budget: LoopBudget;
  imageAllowlist: readonly string[];
  /**
   * Renders nested components (containers) in a scope; a repeat names each element's `segment`
   * (visibility.ts `repeatSegment`), which the paths of hidden instances use.
   */
  renderChildren(components: Component[], scope: Record<string, unknown>, inner?: { segment?: string; widthMm?: number }): Promise<string>;
  /** The width the component has to fill, in millimetres: the page's content width, less what containers take. */
  widthMm: number;
  /** Where an image asset of the project (by id) is loaded from, or undefined when the document has no such image. */
  assetUrl?: (id: string) => string | undefined;
  /** The document's headings for its tables of contents, when it has one (toc.ts); absent in headers and footers. */
  outline?: Outline;
}

/** The part of the context that data helpers need (shared with the Excel renderer). */
export type DataContext = Pick<RenderContext, 'scope' | 'format' | 'budget'>;

/** A length in millimetres, when it is an absolute one (`%` and the like: undefined). */
export function lengthMm(value: string | number | undefined): number | undefined {
  if (typeof value === 'number') return value;
  const m = typeof value === 'string' ? /^(\d+(?:\.\d+)?)(mm|cm|in|pt|px)$/.exec(value) : null;
  if (!m) return undefined;
  return Number(m[1]) * { mm: 1, cm: 10, in: 25.4, pt: 25.4 / 72, px: 25.4 / 96 }[m[2] as 'mm' | 'cm' | 'in' | 'pt' | 'px'];
}

/** Length props: numbers are millimetres; strings are checked by the props schema. */
export function cssLength(value: string | number | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  return typeof value === 'number' ? `${value}mm` : value;
}
