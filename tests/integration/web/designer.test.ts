import type { Browser, ElementHandle, Page } from 'puppeteer';
import { startTestApp, type TestApp } from '../../support/app';
import { byRole, expectWellBehaved, keepScreenshot, launchBrowser, regionText, signInThroughApp, waitForRegionText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember } from '../../support/teams';
import { waitFor } from '../../support/wait';

/**
 * The template designer in a browser (docs/web.md "The designer"): Puck over the template's
 * definition, fields from GET /api/templates/component-types, drafts saved as the editing pauses,
 * the real PDF preview following them.
 */
describe('the template designer', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  type Component = { id: string; type: string; props: Record<string, unknown> };
  /** Every component of the stored draft, containers' children included. */
  async function storedComponents(user: SignedUpUser, templateId: string): Promise<Component[]> {
    const res = await app.request('GET', `/api/templates/${templateId}`, { token: user.accessToken });
    const all: Component[] = [];
    JSON.stringify(res.body.schema, (_k, v: unknown) => {
      if (v && typeof v === 'object' && 'type' in v && 'props' in v && 'id' in v) all.push(v as Component);
      return v;
    });
    return all;
  }

  /** A block in the canvas, by the label its sketch shows ("Heading · title"). */
  async function block(page: Page, label: string): Promise<ElementHandle<Element>> {
    const canvas = await byRole(page, 'region', 'Canvas').waitHandle();
    return (await canvas.waitForSelector(`::-p-text(${label})`))!;
  }

  /** Replaces `from` in the text box with `to` in one input event (one step of the editor's history). */
  async function replaceIn(page: Page, name: string, from: string, to: string): Promise<void> {
    const box = await byRole(page, 'textbox', name).waitHandle();
    await box.evaluate((el, text) => {
      const input = el as HTMLInputElement | HTMLTextAreaElement;
      const at = input.value.indexOf(text);
      if (at < 0) throw new Error(`"${text}" is not in the box`);
      input.focus();
      input.setSelectionRange(at, at + text.length);
    }, from);
    await page.keyboard.sendCharacter(to);
  }

  /** Two animation frames: the page has handled the pointer events sent before. */
  const frames = (page: Page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

  /**
   * Drags `from` onto `to` with the mouse, as a person does: press and hold until the drag starts
   * (Puck waits for a still press before it lifts a block, then marks its canvas), move step by step
   * until Puck shows where the block would land, release, and wait for the canvas to settle.
   */
  async function drag(page: Page, from: ElementHandle<Element>, to: ElementHandle<Element>): Promise<void> {
    await from.scrollIntoView();
    await to.scrollIntoView();
    const a = (await from.boundingBox())!;
    const b = (await to.boundingBox())!;
    const start = { x: a.x + 20, y: a.y + a.height / 2 };
    const end = { x: b.x + 40, y: b.y + 4 };
    await page.mouse.move(start.x, start.y);
    await page.mouse.down();
    await page.waitForSelector('[data-puck-dragging]');
    for (let i = 1; i <= 15; i++) {
      await page.mouse.move(start.x + ((end.x - start.x) * i) / 15, start.y + ((end.y - start.y) * i) / 15);
      await frames(page);
    }
    // Puck follows the pointer at most every 50 ms: wait for its drop line, then hold on the target
    // for a few more frames so the last position is the one it took.
    await page.waitForSelector('[data-puck-line-drag]');
    for (let i = 0; i < 4; i++) {
      await page.mouse.move(end.x + (i % 2), end.y);
      await frames(page);
    }
    await page.mouse.up();
    await page.waitForFunction(() => !document.querySelector('[data-puck-dragging]'));
  }

  it('opens the invoice example unchanged, edits a heading with the preview following, undoes and redoes, adds a component from the palette and shows a refusal on its component', async () => {
    const user = await signUp(app, { verified: true });
    await withAppPage(browser, 'designer', async (tab) => {
      const { page } = tab;
      await page.setViewport({ width: 1440, height: 1000 });
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'button', 'Start from an example').click();
      await byRole(page, 'button', 'Use the Invoice (example) example').click();
      await byRole(page, 'heading', 'Invoice (example)').wait();
      const templateId = /\/templates\/([^/]+)$/.exec(page.url())![1];
      const before = await app.request('GET', `/api/templates/${templateId}`, { token: user.accessToken });

      await byRole(page, 'link', 'Open the designer').click();
      for (const region of ['Outline', 'Components', 'Canvas', 'Properties', 'Sample data', 'Preview']) await byRole(page, 'region', region).wait();
      await waitForRegionText(page, 'Preview', 'Invoice INV-2026-014');
      // Opened and shown by the editor, the template is what it was: nothing to save.
      expect(await page.$eval('aria/Draft[role="status"]', (el) => el.textContent)).toBe('No changes');
      expect((await app.request('GET', `/api/templates/${templateId}`, { token: user.accessToken })).body.updatedAt).toBe(before.body.updatedAt);
      await expectWellBehaved(tab, app.url, 'designer');

      // Select the title; its fields come from its props schema; a change is saved and previewed.
      await (await block(page, 'Heading · title')).click();
      await byRole(page, 'textbox', 'Level').wait();
      await replaceIn(page, 'Text', 'Invoice', 'Rechnung');
      await waitForRegionText(page, 'Preview', 'Rechnung INV-2026-014');
      await waitFor(async () => (await storedComponents(user, templateId)).find((c) => c.id === 'title')?.props.text === 'Rechnung {{number}}', { what: 'the draft saved' });
      await keepScreenshot(page, 'designer');

      await byRole(page, 'button', 'Undo').click();
      await page.waitForFunction((el) => !el.textContent?.includes('Rechnung'), {}, await byRole(page, 'region', 'Preview').waitHandle());
      expect((await storedComponents(user, templateId)).find((c) => c.id === 'title')?.props.text).toBe('Invoice {{number}}');
      await byRole(page, 'button', 'Redo').click();
      await waitForRegionText(page, 'Preview', 'Rechnung INV-2026-014');

      // From the palette into the canvas, above the totals.
      const palette = await byRole(page, 'region', 'Components').waitHandle();
      await drag(page, (await palette.waitForSelector('::-p-text(Markdown)'))!, await block(page, 'Key value · totals'));
      await block(page, 'Markdown · markdown-');
      const added = await waitFor(async () => (await storedComponents(user, templateId)).find((c) => c.type === 'markdown'), { what: 'the new component saved' });
      expect(added.props).toEqual({ text: '**Bold** and _italic_' });
      await waitForRegionText(page, 'Preview', 'Bold and italic');

      // What the API refuses is not saved and is shown on the component it concerns.
      await (await block(page, 'Table · lines')).click();
      await replaceIn(page, 'Data source', 'pricedLines', 'priced lines!');
      const problems = await page.waitForSelector('aria/Problems of lines');
      expect(await problems!.evaluate((el) => el.textContent)).toMatch(/dataSource/);
      expect(await page.$eval('aria/Draft[role="status"]', (el) => el.textContent)).toBe('Not saved');
      expect(await regionText(page, 'Properties')).toContain('Problems of this component');
      expect((await storedComponents(user, templateId)).find((c) => c.id === 'lines')?.props.dataSource).toBe('pricedLines');
      await keepScreenshot(page, 'designer-problem');
      await byRole(page, 'button', 'Undo').click();
      await page.waitForFunction(() => !document.querySelector('[aria-label="Problems of lines"]'));
      expect(await page.$eval('aria/Draft[role="status"]', (el) => el.textContent)).toBe('Draft saved');
      await expectWellBehaved(tab, app.url, 'designer after edits');
    });
  });

  it('shows a viewer the design read-only: no palette, fields that do not change', async () => {
    const owner = await signUp(app, { verified: true });
    const teams = await app.request('GET', '/api/teams', { token: owner.accessToken });
    const teamId = teams.body.data[0].id as string;
    const created = await app.request('POST', '/api/templates', {
      token: owner.accessToken,
      headers: { 'X-Team-Id': teamId },
      body: { name: 'Shared design', outputFormats: ['pdf'], schema: { sections: [{ id: 's', components: [{ id: 'hello', type: 'heading', props: { text: 'Hello' } }] }] } },
    });
    expect(created.status).toBe(201);
    const viewer = await addMember(app, owner, teamId, 'viewer');
    await withAppPage(browser, 'designer-viewer', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, viewer.email, viewer.password);
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'combobox', 'Project').click();
      await (await page.waitForSelector(`aria/${teams.body.data[0].name}[role="option"]`))!.click();
      await byRole(page, 'link', 'Shared design').click();
      await byRole(page, 'link', 'View in the designer').click();
      await (await block(page, 'Heading · hello')).click();
      const text = await byRole(page, 'textbox', 'Text').waitHandle();
      expect(await text.evaluate((el) => (el as HTMLInputElement).readOnly)).toBe(true);
      expect(await page.$('aria/Components[role="region"]')).toBeNull();
      expect(await page.$eval('aria/Undo[role="button"]', (el) => (el as HTMLButtonElement).disabled)).toBe(true);
      await expectWellBehaved(tab, app.url, 'designer as a viewer');
    });
  });
});
