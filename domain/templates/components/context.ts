import type { FormatOptions } from '../format';
import type { LoopBudget } from '../loop-budget';
import type { Component } from '../template.types';

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
  renderChildren(components: Component[], scope: Record<string, unknown>, segment?: string): Promise<string>;
}

/** The part of the context that data helpers need (shared with the Excel renderer). */
export type DataContext = Pick<RenderContext, 'scope' | 'format' | 'budget'>;

/** Length props: numbers are millimetres; strings are checked by the props schema. */
export function cssLength(value: string | number | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  return typeof value === 'number' ? `${value}mm` : value;
}
