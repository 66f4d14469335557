import type { Page } from 'puppeteer';

/**
 * Reading the dashboard's Flow analytics page (docs/web.md "Flow analytics") the way a screen reader
 * does, and writing the API's figures the way the page writes them, so a test compares the two.
 */

/** The cells of a table's body rows, by the table's name (a visually hidden one too: it is in the accessibility tree). */
export function tableRows(page: Page, table: string): Promise<string[][]> {
  return page.$eval(`aria/${table}[role="table"]`, (t) => Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent?.trim() ?? '')));
}

/** Waits until the table named `table` holds exactly `rows` (the page reads the API again after a control changed). */
export async function waitForRows(page: Page, table: string, rows: Array<Array<string | number>>): Promise<void> {
  const expected = JSON.stringify(rows.map((r) => r.map(String)));
  try {
    await page.waitForFunction(
      (name, want) => {
        const t = Array.from(document.querySelectorAll('table')).find((el) => el.getAttribute('aria-label') === name);
        if (!t) return false;
        const got = Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent?.trim() ?? ''));
        return JSON.stringify(got) === want;
      },
      { timeout: 20_000 },
      table,
      expected,
    );
  } catch (err) {
    // Say what the page shows instead.
    const shown = await tableRows(page, table).catch(() => 'no such table');
    throw new Error(`table "${table}": expected ${expected}, page shows ${JSON.stringify(shown)} (${(err as Error).message})`);
  }
}

/** The text of the region named `name`. */
export function regionOf(page: Page, name: string): Promise<string> {
  return page.$eval(`aria/${name}[role="region"]`, (r) => r.textContent ?? '');
}

/** A rate (a percentage 0–100) as the page writes it: "57.1%", "80%", "—" for null. */
export function rate(percent: number | null): string {
  if (percent === null) return '—';
  const rounded = Math.round(percent * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded : rounded.toFixed(1)}%`;
}

/** Milliseconds as the page writes them ("850 ms", "4.2 s", "3 min 20 s"); durations of an hour or more are not needed here. */
export function duration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Math.round(s * 10) / 10} s`;
  const total = Math.round(s);
  if (total >= 3600) throw new Error('duration: not written for an hour or more');
  return total % 60 === 0 ? `${Math.floor(total / 60)} min` : `${Math.floor(total / 60)} min ${total % 60} s`;
}

/** The page's words for the run statuses, in its order. */
export const STATUS_WORDS: Array<[string, string]> = [
  ['validated', 'Validated'],
  ['rendering', 'Rendering'],
  ['review_required', 'In review'],
  ['approved', 'Approved'],
  ['delivering', 'Delivering'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['validation_failed', 'Failed validation'],
  ['rejected', 'Rejected'],
  ['expired', 'Expired'],
];

/** Clicks a SegmentedControl's option as a person does: its radio input is drawn as its label. */
export async function chooseRadio(page: Page, name: string): Promise<void> {
  const radio = await page.locator(`aria/${name}[role="radio"]`).setVisibility(null).waitHandle();
  await (await radio.evaluateHandle((input) => (input as HTMLInputElement).labels![0])).click();
}
