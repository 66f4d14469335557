import Joi from 'joi';
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml, interpolateText } from '../interpolate';
import type { HtmlProps, MarkdownProps } from '../template.types';
import type { DataContext, RenderContext } from './context';
import { align, styleAttr, textStyle } from './style';

/**
 * Rich text components (docs/templates.md "markdown", "html"). Both take placeholders whose values
 * print as text (escaped for markdown or HTML before the markup is read), and neither can make the
 * page load anything: markdown images are off and links only `http(s)`/`mailto`; HTML goes through
 * sanitize-html with an allow-list of tags, attributes and style properties (no script, no event
 * handler, no `url()`, images only as `data:`).
 */

/**
 * Longest markdown or HTML source of one component. Both parsers are linear in practice, but their
 * worst inputs cost ~2 ms per 1,000 characters (a run of `[` for markdown-it), so a component stays
 * well under 50 ms however hostile its text; a page of terms is about 5,000 characters.
 */
const RICH_TEXT_MAX = 20_000;
const richText = Joi.string().allow('').max(RICH_TEXT_MAX);

export const markdownProps = Joi.object({ text: richText.required(), align, style: textStyle });
export const htmlProps = Joi.object({ html: richText.required(), style: textStyle });

const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false }).disable(['image']);
markdown.validateLink = (url: string) => /^(?:https?:|mailto:)/i.test(url.trim());

/** Every ASCII punctuation character may be backslash-escaped in CommonMark: a value's are. */
const escapeMarkdown = (value: string): string => value.replace(/[!-/:-@[-`{-~]/g, (ch) => `\\${ch}`);

/** The markdown's source, its placeholders' values escaped. */
const markdownSource = (p: MarkdownProps, ctx: DataContext): string => interpolateText(p.text, ctx.scope, ctx.format, escapeMarkdown);

/** The markdown's HTML, its placeholders' values escaped first. */
function markdownToHtml(p: MarkdownProps, ctx: DataContext): string {
  return markdown.render(markdownSource(p, ctx));
}

/** The markdown as markdown-it's tokens, read as for the page (workbooks build rich text from them). */
export const markdownTokens = (p: MarkdownProps, ctx: DataContext): ReturnType<typeof markdown.parse> => markdown.parse(markdownSource(p, ctx), {});

export function markdownHtml(p: MarkdownProps, ctx: RenderContext): string {
  return `<div class="fw-markdown"${styleAttr(p.style, p.align)}>${markdownToHtml(p, ctx)}</div>`;
}

/** A length, colour, keyword or number, never a function call such as `url()`: what an allowed style property may hold. */
const SAFE_CSS_VALUE = [/^[#\w\s.,%'"-]+$/];
const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'p', 'br', 'b', 'strong', 'i', 'em', 'u', 's', 'small', 'sub', 'sup', 'span', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
    'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'blockquote', 'pre', 'code', 'hr', 'a', 'img',
  ],
  allowedAttributes: { '*': ['class', 'style'], a: ['href'], img: ['src', 'alt', 'width', 'height'], td: ['colspan', 'rowspan'], th: ['colspan', 'rowspan'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  allowedStyles: {
    '*': Object.fromEntries(
      [
        'color', 'background-color', 'text-align', 'font-weight', 'font-style', 'font-size', 'font-family', 'text-decoration', 'text-transform',
        'line-height', 'letter-spacing', 'padding', 'padding-top', 'padding-bottom', 'padding-left', 'padding-right', 'margin', 'margin-top',
        'margin-bottom', 'margin-left', 'margin-right', 'border', 'border-top', 'border-bottom', 'border-left', 'border-right', 'border-collapse',
        'border-radius', 'width', 'height', 'vertical-align', 'white-space', 'display',
      ].map((prop) => [prop, SAFE_CSS_VALUE]),
    ),
  },
};

/** The fragment's HTML: values escaped, then the whole cleaned by the allow-list. */
function cleanHtml(p: HtmlProps, ctx: DataContext): string {
  return sanitizeHtml(interpolateText(p.html, ctx.scope, ctx.format, escapeHtml), SANITIZE);
}

export function htmlHtml(p: HtmlProps, ctx: RenderContext): string {
  return `<div class="fw-html"${styleAttr(p.style)}>${cleanHtml(p, ctx)}</div>`;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'", '&nbsp;': ' ' };

/** Lines of text of an HTML fragment (workbooks): block ends become line breaks, tags go, entities are read. */
function htmlLines(html: string): string[] {
  const breaks = html.replace(/<\/(?:p|div|li|h[1-6]|tr|blockquote|pre|caption)\s*>|<br\s*\/?>|<hr\s*\/?>/gi, '\n');
  const text = sanitizeHtml(breaks, { allowedTags: [], allowedAttributes: {} }).replace(/&(?:amp|lt|gt|quot|#39|#x27|nbsp);/g, (e) => ENTITIES[e]);
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The fragment's text, one entry per line, for a workbook. */
export const htmlTextLines = (p: HtmlProps, ctx: DataContext): string[] => htmlLines(cleanHtml(p, ctx));
