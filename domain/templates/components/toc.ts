import { randomUUID } from 'node:crypto';
import Joi from 'joi';
import { interpolateHtml } from '../interpolate';
import type { TocProps } from '../template.types';
import type { RenderContext } from './context';

/**
 * A table of contents (docs/templates.md "toc"): the document's heading components with the pages
 * they landed on. While the page is built, each heading gets an anchor and each table of contents
 * leaves a marker; once everything is rendered the markers become the lists (a toc may come before
 * the headings it lists). Each entry links to its heading, and its page number is an empty,
 * fixed-width slot: the printer (adapters/rendering/chromium-page.ts) prints once, reads where
 * each anchor landed from the PDF's named destinations, writes the numbers into the slots and
 * prints again. The slots keep their width, so nothing moves between the two prints.
 */

export const tocProps = Joi.object({
  levels: Joi.number().integer().min(1).max(6).default(3),
  title: Joi.string().allow('').max(1000),
});

export class Outline {
  private readonly headings: Array<{ id: string; level: number; html: string }> = [];
  private readonly tocs: Array<{ marker: string; levels: number }> = [];
  private readonly nonce = randomUUID();

  /** Registers a heading (its escaped HTML) and answers the anchor id it is to carry. */
  heading(level: number, html: string): string {
    const id = `fw-h-${this.headings.length + 1}`;
    this.headings.push({ id, level, html });
    return id;
  }

  /** A marker the finished page replaces with the list of headings of level ≤ `levels`. */
  toc(levels: number): string {
    const marker = `<!--fw-toc-${this.nonce}-${this.tocs.length}-->`;
    this.tocs.push({ marker, levels });
    return marker;
  }

  get empty(): boolean {
    return this.tocs.length === 0;
  }

  /** The page with every marker replaced by its list; `charge` is told each list's HTML first. */
  fill(html: string, charge: (html: string) => void): string {
    let out = html;
    for (const { marker, levels } of this.tocs) {
      const entries = this.headings
        .filter((h) => h.level <= levels)
        .map(
          (h) =>
            `<li class="fw-toc-entry fw-toc-level-${h.level}"><a href="#${h.id}"><span class="fw-toc-text">${h.html}</span><span class="fw-toc-leader"></span><span class="fw-toc-page" data-fw-toc="${h.id}"></span></a></li>`,
        )
        .join('');
      const list = `<ol class="fw-toc-list">${entries}</ol>`;
      charge(list);
      const at = out.indexOf(marker);
      if (at >= 0) out = out.slice(0, at) + list + out.slice(at + marker.length);
    }
    return out;
  }
}

export function tocHtml(p: TocProps, ctx: RenderContext): string {
  const title = p.title ? `<div class="fw-toc-title">${interpolateHtml(p.title, ctx.scope, ctx.format)}</div>` : '';
  // No outline: a toc inside a header or footer lists nothing.
  const list = ctx.outline ? ctx.outline.toc(Math.trunc(p.levels) || 3) : '';
  return `<nav class="fw-toc" aria-label="Table of contents">${title}${list}</nav>`;
}
