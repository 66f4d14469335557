import type { Page } from 'puppeteer';
import { byRole } from './browser';

/**
 * The gate pages' code editors (CodeMirror: a `textbox` named after what it holds) driven as a person
 * does: a click into the editor, and keys typed (React and CodeMirror see real input events).
 */
export async function typeInCodeEditor(page: Page, name: string, text: string, { replace = false } = {}): Promise<void> {
  const editor = await byRole(page, 'textbox', name).waitHandle();
  await editor.click();
  if (replace) {
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyA');
    await page.keyboard.up('Control');
    await page.keyboard.press('Backspace');
  }
  await page.keyboard.type(text);
}

/** The text of a code editor, line by line. */
export async function codeEditorText(page: Page, name: string): Promise<string> {
  const editor = await byRole(page, 'textbox', name).waitHandle();
  return editor.evaluate((el) => (el as HTMLElement).innerText);
}

/** Picks `option` in the Select (a combobox) named `name`. */
export async function choose(page: Page, name: string, option: string): Promise<void> {
  await byRole(page, 'combobox', name).click();
  await byRole(page, 'option', option).click();
  const box = await byRole(page, 'combobox', name).waitHandle();
  await page.waitForFunction((el, o) => (el as HTMLInputElement).value === o, {}, box, option);
}

/** The rows of the table named `name`, each its cells' text. */
export async function tableRows(page: Page, name: string): Promise<string[][]> {
  const table = await byRole(page, 'table', name).waitHandle();
  return table.evaluate((t) => Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent?.trim() ?? '')));
}
