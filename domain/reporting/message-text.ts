/**
 * The placeholders of a channel's texts (docs/reporting.md "Channels"): e-mail
 * subject and body, Slack text, Teams title and text. Plain token replacement: `{{report.name}}` is
 * looked up in a fixed table and replaced by its value, nothing is evaluated. Pure: the API checks
 * the tokens when a channel is saved, the senders fill them at delivery.
 */

/** Every token a channel text may hold. `{{run.scheduledFor | date}}` is yyyy-MM-dd in the run's zone. */
export const MESSAGE_TOKENS = [
  'report.name',
  'report.slug',
  'run.shortId',
  'run.status',
  'run.scheduledFor',
  'run.scheduledFor | date',
  'links',
] as const;
export type MessageToken = (typeof MESSAGE_TOKENS)[number];

/** `{{ … }}` with at most 100 characters inside: no backtracking past that on a long text. */
const TOKEN = /\{\{([^{}]{0,100})\}\}/g;

const normalise = (inner: string) => inner.trim().replace(/\s*\|\s*/, ' | ');

/** The tokens of `text` this module does not know (what a save refuses), each once, at most 10. */
export function unknownTokens(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(TOKEN)) {
    const token = normalise(m[1]);
    if (!(MESSAGE_TOKENS as readonly string[]).includes(token)) out.add(token.slice(0, 60));
    if (out.size >= 10) break;
  }
  return [...out];
}

/**
 * `text` with each known token replaced by its value (a missing value becomes empty); unknown
 * tokens stay as written. The result is cut at `maxLength` characters.
 */
export function fillTokens(text: string, values: Partial<Record<MessageToken, string>>, maxLength: number): string {
  const out = text.replace(TOKEN, (whole, inner: string) => {
    const token = normalise(inner);
    return (MESSAGE_TOKENS as readonly string[]).includes(token) ? (values[token as MessageToken] ?? '') : whole;
  });
  return out.length > maxLength ? `${out.slice(0, maxLength - 1)}…` : out;
}

/** yyyy-MM-dd of `at` in `timezone` (an unknown zone falls back to UTC). */
export function dateInZone(at: string | Date, timezone: string): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return '';
  let zone = timezone;
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
  } catch {
    zone = 'UTC';
  }
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** One line of text: CR, LF and other control characters become spaces (mail subjects, chat titles). */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}
