import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, ElementHandle, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, typeOver, waitForRegionText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { PNG_1PX, pdfPixels, solidPng } from '../../support/rendering-pdf';
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
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(() => closeAppWithBrowser(app, browser));

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

  /** Chooses an option of a segmented control (its radio input is visually hidden; a screen reader activates it). */
  async function choose(page: Page, option: string): Promise<void> {
    const radio = await byRole(page, 'radio', option).waitHandle();
    await radio.evaluate((el) => (el as HTMLInputElement).click());
  }

  /** Finds `text` in the code view with its search (Ctrl+F, Enter): the match is selected and scrolled into view. */
  async function find(page: Page, text: string): Promise<void> {
    await page.keyboard.down('Control');
    await page.keyboard.press('f');
    await page.keyboard.up('Control');
    await typeInto(page, 'Find', text);
    await page.keyboard.press('Enter');
  }

  /** Types into a field key by key, over what it held (the code view's search panel reads its fields on key-up). */
  async function typeInto(page: Page, name: string, text: string): Promise<void> {
    const field = await byRole(page, 'textbox', name).waitHandle();
    await field.evaluate((el) => {
      (el as HTMLInputElement).focus();
      (el as HTMLInputElement).select();
    });
    await page.keyboard.type(text);
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

  it('opens the invoice example unchanged, shows calculated values, edits a heading with the preview following, undoes and redoes, adds a component from the palette and shows a refusal on its component', async () => {
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

      // Each calculated variable's value with the sample data, and again after the data changes.
      await waitForRegionText(page, 'Calculated values', '1428');
      expect(await regionText(page, 'Calculated values')).toMatch(/subtotal\s*1200/);
      await typeOver(page, 'Sample data', '"discount": 40', '"discount": 140');
      await waitForRegionText(page, 'Calculated values', '1309');
      await waitForRegionText(page, 'Preview', '€1,309.00');
      // The sample data is kept with the template: a new page load previews with it.
      await waitFor(async () => (await app.request('GET', `/api/templates/${templateId}/sample-data`, { token: user.accessToken })).body.data.discount === 140, { what: 'the sample data kept' });
      await page.reload();
      await waitForRegionText(page, 'Calculated values', '1309');
      expect(await page.$eval('aria/Sample data[role="textbox"]', (el) => (el as HTMLTextAreaElement).value)).toContain('"discount": 140');

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

  it('keeps the code view and the visual editor in sync both ways, completes from the schema and marks what the API refuses', async () => {
    const user = await signUp(app, { verified: true });
    await withAppPage(browser, 'designer-code', async (tab) => {
      const { page } = tab;
      await page.setViewport({ width: 1440, height: 1000 });
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'button', 'Start from an example').click();
      await byRole(page, 'button', 'Use the Invoice (example) example').click();
      await byRole(page, 'link', 'Open the designer').click();
      await waitForRegionText(page, 'Preview', 'Invoice INV-2026-014');

      // Visual to code: a change in the properties shows in the code view beside them.
      await (await block(page, 'Heading · title')).click();
      await choose(page, 'Code');
      const code = await byRole(page, 'textbox', 'Definition (JSON)').waitHandle();
      await replaceIn(page, 'Text', 'Invoice', 'Rechnung');
      await waitForRegionText(page, 'Preview', 'Rechnung INV-2026-014');
      await code.click();
      await find(page, 'Rechnung {{number}}');
      await waitForRegionText(page, 'Code', 'Rechnung {{number}}');

      // Code to visual, with the editor's own find and replace: the canvas and the preview follow.
      await typeInto(page, 'Replace', 'Facture {{number}}');
      await byRole(page, 'button', 'replace all').click();
      await waitForRegionText(page, 'Preview', 'Facture INV-2026-014');
      await choose(page, 'Canvas');
      await block(page, 'Facture {{number}}');
      await choose(page, 'Code');

      // Completion from the schema: a component's type offers the catalogue's types.
      await (await byRole(page, 'textbox', 'Definition (JSON)').waitHandle()).click();
      await find(page, '"type": "heading"');
      await page.keyboard.press('Escape');
      // Just after the value's opening quote: every type is a candidate.
      await page.keyboard.press('ArrowRight');
      for (let i = 0; i < '"heading'.length; i++) await page.keyboard.press('ArrowLeft');
      await page.keyboard.down('Control');
      await page.keyboard.press('Space');
      await page.keyboard.up('Control');
      const options = await page.waitForSelector('aria/Completions[role="listbox"]').catch(async () => page.waitForSelector('[role="listbox"]'));
      const labels = await options!.$$eval('[role="option"]', (items) => items.map((i) => i.textContent));
      expect(labels).toEqual(expect.arrayContaining(['"heading"', '"table"', '"barcode"', '"columns"']));
      await page.keyboard.press('Escape');

      // What the API refuses is marked in the code and on the component; not valid JSON is said so.
      await find(page, '"level": 1');
      await typeInto(page, 'Replace', '"level": 9');
      await byRole(page, 'button', 'replace').click();
      await page.waitForFunction(() => document.querySelector('[aria-label="Draft"]')?.textContent === 'Not saved');
      expect(await regionText(page, 'Code')).not.toContain('Not valid JSON');
      // The editor's list of diagnostics (Ctrl+Shift+M) holds the API's problem at its place.
      await (await byRole(page, 'textbox', 'Definition (JSON)').waitHandle()).click();
      await page.keyboard.down('Control');
      await page.keyboard.down('Shift');
      await page.keyboard.press('KeyM');
      await page.keyboard.up('Shift');
      await page.keyboard.up('Control');
      const diagnostics = await byRole(page, 'listbox', 'Diagnostics').waitHandle();
      await page.waitForFunction((list) => /props\.level/.test(list.textContent ?? ''), {}, diagnostics);
      await keepScreenshot(page, 'designer-code');
      await expectWellBehaved(tab, app.url, 'code view');
    });
  });

  it('brands a template: the theme colour picked in the document settings and a logo uploaded from the image component, both in the rendered PDF', async () => {
    const user = await signUp(app, { verified: true });
    const created = await app.request('POST', '/api/templates', {
      token: user.accessToken,
      body: {
        name: 'Branded',
        outputFormats: ['pdf'],
        schema: {
          sections: [
            {
              id: 'main',
              components: [
                { id: 'title', type: 'heading', props: { text: 'ACME INVOICE', level: 1, style: { color: 'primary', fontSize: 40 } } },
                { id: 'logo', type: 'image', props: { src: `data:image/png;base64,${PNG_1PX.toString('base64')}`, alt: 'Logo', width: '60mm' } },
              ],
            },
          ],
        },
      },
    });
    expect(created.status).toBe(201);
    const templateId = created.body.id as string;
    const logo = join(await mkdtemp(join(tmpdir(), 'logo-')), 'logo.png');
    await writeFile(logo, solidPng(240, 120, [0xe0, 0x10, 0x10]));
    await withAppPage(browser, 'designer-branding', async (tab) => {
      const { page } = tab;
      await page.setViewport({ width: 1440, height: 1000 });
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await page.goto(`${app.url}/templates/${templateId}/design`);
      // Nothing selected: the properties are the document's settings, the theme's colours among them.
      await typeInto(page, 'Primary', '#7b2cbf');
      await waitFor(async () => (await app.request('GET', `/api/templates/${templateId}`, { token: user.accessToken })).body.schema.theme?.colors?.primary === '#7b2cbf', { what: 'the colour saved' });

      await (await block(page, 'Image · logo')).click();
      const [chooser] = await Promise.all([page.waitForFileChooser(), byRole(page, 'button', 'Upload a picture').click()]);
      await chooser.accept([logo]);
      const src = await waitFor(async () => {
        const stored = (await storedComponents(user, templateId)).find((c) => c.id === 'logo')?.props.src as string;
        return stored.startsWith('asset:') ? stored : undefined;
      }, { what: 'the uploaded logo saved' });
      const assets = await app.request('GET', '/api/assets', { token: user.accessToken });
      expect(assets.body.data.map((a: { reference: string }) => a.reference)).toContain(src);
      await expectWellBehaved(tab, app.url, 'designer branding');
    });
    // What generation will print: the logo's red and the theme's purple.
    const preview = await fetch(`${app.url}/api/templates/${templateId}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ format: 'pdf' }),
    });
    expect(preview.status).toBe(200);
    const pixels = await pdfPixels(Buffer.from(await preview.arrayBuffer()), 1, 40);
    let red = 0;
    let purple = 0;
    for (let y = 0; y < pixels.height; y++) {
      for (let x = 0; x < pixels.width; x++) {
        const [r, g, b] = pixels.rgb(x, y);
        if (r > 200 && g < 60 && b < 60) red++;
        if (Math.abs(r - 0x7b) < 30 && Math.abs(g - 0x2c) < 30 && Math.abs(b - 0xbf) < 30) purple++;
      }
    }
    expect({ red: red > 50, purple: purple > 5 }).toEqual({ red: true, purple: true });
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
