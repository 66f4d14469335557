import type { TemplateTheme } from './template.types';
import { cssFontFamily } from './components/asset-ref';

/**
 * The one stylesheet of every PDF. Font stacks name what Debian ships (fonts-liberation,
 * fonts-dejavu-core, fonts-noto-cjk) so accented Latin, Greek, Cyrillic and CJK all render
 * without tofu; Chromium falls back glyph by glyph along the stack.
 */

export const FONT_STACK =
  "'Liberation Sans', Arial, Helvetica, 'DejaVu Sans', 'Noto Sans', 'Noto Sans CJK SC', 'Noto Sans CJK JP', 'Noto Sans CJK KR', 'Noto Sans CJK TC', sans-serif";

export const STYLESHEET = `
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { margin: 0; font-family: ${FONT_STACK}; font-size: 10pt; line-height: 1.45; color: var(--fw-text); }
.fw-section + .fw-section { margin-top: 8mm; }
.fw-section-title { font-size: 13pt; font-weight: 700; color: var(--fw-primary); margin: 0 0 3mm; padding-bottom: 1.5mm; border-bottom: 1px solid var(--fw-border); }
.fw-heading { color: var(--fw-primary); font-weight: 700; line-height: 1.2; margin: 0 0 3mm; break-after: avoid; }
h1.fw-heading { font-size: 20pt; }
h2.fw-heading { font-size: 15pt; }
h3.fw-heading { font-size: 12.5pt; }
h4.fw-heading, h5.fw-heading, h6.fw-heading { font-size: 11pt; }
.fw-text { margin: 0 0 2.5mm; white-space: normal; overflow-wrap: anywhere; }
.fw-table { width: 100%; border-collapse: collapse; margin: 2mm 0 4mm; font-variant-numeric: tabular-nums; }
.fw-table th { text-align: left; font-weight: 700; font-size: 9pt; color: #334e68; background: #f0f4f8; border-bottom: 1.5px solid #9fb3c8; padding: 1.8mm 2mm; }
.fw-table td { padding: 1.6mm 2mm; border-bottom: 1px solid #e4e7eb; vertical-align: top; overflow-wrap: anywhere; }
.fw-table tbody tr:nth-child(even) td { background: #fafbfc; }
.fw-table tr { break-inside: avoid; }
.fw-table .fw-num { text-align: right; white-space: nowrap; }
.fw-key-value { border-collapse: collapse; margin: 2mm 0 4mm; }
.fw-key-value th { text-align: left; font-weight: 600; color: #486581; padding: 0.8mm 6mm 0.8mm 0; vertical-align: top; white-space: nowrap; }
.fw-key-value td { padding: 0.8mm 0; font-variant-numeric: tabular-nums; }
.fw-list { margin: 0 0 3mm; padding-left: 6mm; }
.fw-list li { margin: 0.6mm 0; }
.fw-divider { border: 0; border-top: 1px solid var(--fw-border); margin: 4mm 0; }
.fw-page-break { break-after: page; height: 0; }
.fw-image { display: block; max-width: 100%; height: auto; margin: 2mm 0; }
.fw-image-missing { display: inline-block; padding: 3mm; margin: 2mm 0; border: 1px dashed #bcccdc; color: #829ab1; font-size: 8.5pt; }
.fw-qrcode { display: block; margin: 2mm 0; image-rendering: pixelated; }
.fw-barcode { margin: 2mm 0; }
.fw-chart { margin: 2mm 0 4mm; break-inside: avoid; }
.fw-chart svg { display: block; width: 100%; height: auto; }
.fw-markdown, .fw-html { margin: 0 0 3mm; overflow-wrap: anywhere; }
.fw-markdown > :first-child, .fw-html > :first-child { margin-top: 0; }
.fw-markdown > :last-child, .fw-html > :last-child { margin-bottom: 0; }
.fw-markdown h1, .fw-markdown h2, .fw-markdown h3, .fw-markdown h4, .fw-markdown h5, .fw-markdown h6 { color: var(--fw-primary); line-height: 1.2; margin: 3mm 0 2mm; break-after: avoid; }
.fw-markdown p, .fw-html p { margin: 0 0 2.5mm; }
.fw-markdown ul, .fw-markdown ol { margin: 0 0 2.5mm; padding-left: 6mm; }
.fw-markdown table { border-collapse: collapse; margin: 2mm 0 3mm; }
.fw-markdown th, .fw-markdown td { text-align: left; padding: 1.2mm 2mm; border-bottom: 1px solid var(--fw-border); }
.fw-markdown blockquote { margin: 0 0 2.5mm; padding-left: 3mm; border-left: 2px solid var(--fw-border); color: var(--fw-muted); }
.fw-markdown code { font-family: 'Liberation Mono', 'DejaVu Sans Mono', monospace; font-size: 0.92em; }
.fw-barcode svg { display: block; width: 100%; height: auto; }
.fw-repeat-item { break-inside: avoid-page; }
.fw-columns { display: grid; align-items: stretch; margin: 0 0 3mm; }
.fw-column { min-width: 0; }
.fw-column > .fw-box:only-child { height: 100%; }
.fw-column > :last-child, .fw-box > :last-child { margin-bottom: 0; }
.fw-box { margin: 0 0 3mm; }
.fw-keep { break-inside: avoid; }
.fw-break-before { break-before: page; }
.fw-break-after { break-after: page; }
.fw-table.fw-rows-split tr { break-inside: auto; }
.fw-toc { margin: 0 0 5mm; }
.fw-toc-title { font-size: 13pt; font-weight: 700; color: var(--fw-primary); margin: 0 0 3mm; }
.fw-toc-list { list-style: none; margin: 0; padding: 0; }
.fw-toc-entry { margin: 0 0 1.2mm; break-inside: avoid; }
.fw-toc-entry a { display: flex; align-items: baseline; color: inherit; text-decoration: none; }
.fw-toc-text { min-width: 0; overflow-wrap: anywhere; }
.fw-toc-leader { flex: 1 1 auto; min-width: 4mm; margin: 0 1.5mm; border-bottom: 1px dotted var(--fw-muted); }
.fw-toc-page { flex: 0 0 auto; width: 3.2em; text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.fw-toc-level-1 { font-weight: 600; }
.fw-toc-level-2 { padding-left: 5mm; }
.fw-toc-level-3 { padding-left: 10mm; }
.fw-toc-level-4, .fw-toc-level-5, .fw-toc-level-6 { padding-left: 15mm; }
.fw-watermark { position: fixed; top: 50%; left: 50%; transform: translate(-50%, -50%) rotate(-35deg);
  font-size: 54pt; font-weight: 700; color: rgba(16, 42, 67, 0.09); white-space: nowrap; z-index: 1000; }
`;

/** Header and footer templates render outside the page's stylesheet: every style is inline. */
export function headerFooterStyle(padding: string, theme?: TemplateTheme): string {
  const family = theme?.fontFamily ? `'${cssFontFamily(theme.fontFamily)}',${FONT_STACK}` : FONT_STACK;
  return (
    `width:100%;display:flex;justify-content:space-between;gap:4mm;font-family:${family};` +
    `font-size:8pt;color:${theme?.colors?.muted ?? '#627d98'};padding:${padding};-webkit-print-color-adjust:exact;`
  );
}
