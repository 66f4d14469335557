import Joi from 'joi';
import { escapeHtml } from '../interpolate';
import type { Align, ColorValue, TemplateTheme, TextStyle } from '../template.types';
import { cssLength } from './context';
import { length } from './props';
import { ASSET_REF, cssFontFamily } from './asset-ref';

/**
 * Alignment, styles and the document theme (docs/templates.md "Layout and style"). Every value
 * that reaches CSS is one the schemas below accepted: numbers in a range, lengths with a unit,
 * `#rgb`/`#rrggbb`/`#rrggbbaa` colours or a theme token, font family names of letters, digits,
 * spaces, `-` and `_`. Nothing else a template writes becomes CSS.
 */

const THEME_TOKENS = ['primary', 'text', 'muted', 'border', 'background'] as const;

/** What the stylesheet uses when the theme says nothing: the colours documents always had. */
const DEFAULT_THEME_COLORS: Record<(typeof THEME_TOKENS)[number], string> = {
  primary: '#102a43',
  text: '#1f2933',
  muted: '#627d98',
  border: '#d9e2ec',
  background: '#ffffff',
};

const hex = Joi.string().pattern(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'colour (#rgb, #rrggbb or #rrggbbaa)');

/** A colour: hex, or a theme token (`primary`, `text`, `muted`, `border`, `background`). */
export const color = Joi.alternatives().try(hex, Joi.string().valid(...THEME_TOKENS, 'transparent'));

// A family name (one of the machine's fonts or an uploaded font's family), or `asset:<id>` of an uploaded font.
const fontFamily = Joi.alternatives().try(
  Joi.string().pattern(/^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$/, 'font family name (letters, digits, spaces, - and _)'),
  Joi.string().pattern(ASSET_REF, 'asset:<id> of a font'),
);

export const align = Joi.string().valid('left', 'center', 'right', 'justify');

const fontSize = Joi.alternatives().try(Joi.number().min(4).max(96), Joi.string().pattern(/^\d+(?:\.\d+)?(?:pt|px|mm)$/, 'font size (e.g. 12pt)'));

export const textStyle = Joi.object({
  fontSize,
  fontWeight: Joi.alternatives().try(Joi.string().valid('normal', 'bold'), Joi.number().valid(100, 200, 300, 400, 500, 600, 700, 800, 900)),
  italic: Joi.boolean(),
  underline: Joi.boolean(),
  uppercase: Joi.boolean(),
  fontFamily,
  color,
  background: color,
  lineHeight: Joi.number().min(0.5).max(4),
  letterSpacing: Joi.string().pattern(/^-?\d+(?:\.\d+)?(?:pt|px|mm|em)$/, 'letter spacing (e.g. 0.5pt)'),
  marginTop: length,
  marginBottom: length,
  padding: length,
});

/** The schema-level `theme`. */
export const themeSchema = Joi.object({
  fontFamily,
  fontSize: Joi.number().min(6).max(24),
  colors: Joi.object(Object.fromEntries(THEME_TOKENS.map((t) => [t, hex]))),
});

/** A colour prop as CSS: a token reads the theme's custom property. */
export function cssColor(value: ColorValue): string {
  return (THEME_TOKENS as readonly string[]).includes(value) ? `var(--fw-${value})` : value;
}

const FONT_FALLBACK = 'sans-serif';

/** `style` and `align` as CSS declarations (no surrounding attribute). */
function styleDeclarations(style: TextStyle | undefined, alignment?: Align): string {
  const out: string[] = [];
  if (alignment) out.push(`text-align:${alignment}`);
  if (!style) return out.join(';');
  if (style.fontSize !== undefined) out.push(`font-size:${typeof style.fontSize === 'number' ? `${style.fontSize}pt` : style.fontSize}`);
  if (style.fontWeight !== undefined) out.push(`font-weight:${style.fontWeight}`);
  if (style.italic) out.push('font-style:italic');
  if (style.underline) out.push('text-decoration:underline');
  if (style.uppercase) out.push('text-transform:uppercase');
  if (style.fontFamily) out.push(`font-family:'${cssFontFamily(style.fontFamily)}',${FONT_FALLBACK}`);
  if (style.color) out.push(`color:${cssColor(style.color)}`);
  if (style.background) out.push(`background:${cssColor(style.background)}`);
  if (style.lineHeight !== undefined) out.push(`line-height:${style.lineHeight}`);
  if (style.letterSpacing) out.push(`letter-spacing:${style.letterSpacing}`);
  if (style.marginTop !== undefined) out.push(`margin-top:${cssLength(style.marginTop, '0')}`);
  if (style.marginBottom !== undefined) out.push(`margin-bottom:${cssLength(style.marginBottom, '0')}`);
  if (style.padding !== undefined) out.push(`padding:${cssLength(style.padding, '0')}`);
  return out.join(';');
}

/** ` style="…"` for an element, or nothing when there is nothing to say. */
export function styleAttr(style: TextStyle | undefined, alignment?: Align, extra = ''): string {
  const css = [styleDeclarations(style, alignment), extra].filter(Boolean).join(';');
  return css ? ` style="${escapeHtml(css)}"` : '';
}

/** The theme as custom properties and body defaults, placed after the stylesheet. */
export function themeCss(theme: TemplateTheme | undefined, fontStack: string): string {
  const colors = { ...DEFAULT_THEME_COLORS, ...(theme?.colors ?? {}) };
  const vars = THEME_TOKENS.map((t) => `--fw-${t}:${colors[t]}`).join(';');
  const body = [
    theme?.fontFamily ? `font-family:'${cssFontFamily(theme.fontFamily)}',${fontStack}` : '',
    theme?.fontSize ? `font-size:${theme.fontSize}pt` : '',
    theme?.colors?.background ? 'background:var(--fw-background)' : '',
  ].filter(Boolean);
  return `:root{${vars}}${body.length > 0 ? `body{${body.join(';')}}` : ''}`;
}

/** Longest schema-level `css`. */
const CSS_MAX_CHARS = 50_000;

/**
 * The schema-level `css` (docs/templates.md "Your own CSS"): full control of the page's look for
 * those who want it, inside the page's own walls. Refused: `<` (it could close the style element),
 * `@import`, `@charset`, `@namespace`, and any `url()` but a `data:` one (or an `asset:` reference,
 * kept for assets); `expression(` and `-moz-binding` of old browsers too. Chromium prints with
 * JavaScript off and every request blocked besides, so this is a second wall, not the only one.
 */
export const cssSchema = Joi.string()
  .max(CSS_MAX_CHARS)
  .custom((css: string) => {
    if (css.includes('<')) throw new Error('may not contain "<"');
    if (/@(?:import|charset|namespace)\b/i.test(css)) throw new Error('may not use @import, @charset or @namespace');
    if (/expression\s*\(|-moz-binding|behavior\s*:/i.test(css)) throw new Error('may not use expression(), -moz-binding or behavior');
    // Every url( must be followed by an optional quote and data: (linear: one pass of indexOf).
    const lower = css.toLowerCase();
    for (let at = lower.indexOf('url('); at !== -1; at = lower.indexOf('url(', at + 4)) {
      const rest = lower.slice(at + 4, at + 4 + 16).replace(/^[\s'"\\]+/, '');
      if (!rest.startsWith('data:') && !rest.startsWith('asset:')) throw new Error('may use url() only with data: (or asset:) addresses');
    }
    // Escapes could spell any of the above (u\72 l(): none allowed.
    if (css.includes('\\')) throw new Error('may not contain backslash escapes');
    return css;
  }, 'safe CSS');
