import type { Browser, ElementHandle, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, closeDialog, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createSourceDatabase, type SourceDatabase } from '../../support/reporting-sources';

/**
 * Reporting's datasources and queries in the dashboard (docs/web.md "Reporting: datasources and
 * queries") against a database of the test's own on the machine's Postgres: a datasource made in the
 * app after "Test connection", its schema read and browsed in the tree to a column; a query written in
 * the SQL editor with completion from that schema, a parameter typed and filled in, "Run" showing the
 * table's rows in the grid, a refused text shown in the editor, "Publish" and the versions; an agent
 * registered with its token shown once. Each step is checked against the API and the database.
 */
describe('reporting datasources and queries in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let source: SourceDatabase;
  let user: SignedUpUser;

  beforeAll(async () => {
    // The database is on 127.0.0.1, which outbound connections refuse unless the operator allows it.
    ({ app, browser } = await startAppWithBrowser({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } }));
    source = await createSourceDatabase(`
      CREATE TABLE harvest (id integer PRIMARY KEY, fruit text NOT NULL, kilos numeric(8,2) NOT NULL, picked_on date);
      INSERT INTO harvest VALUES (1, 'apple', 1.50, '2026-09-01'), (2, 'pear', 2.25, '2026-09-02'), (3, 'plum', 3.00, '2026-09-03'), (4, 'quince', 0.75, NULL);
    `);
    user = await signUp(app, { verified: true });
  });
  afterAll(async () => {
    await closeAppWithBrowser(app, browser);
    await source?.drop();
  });

  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { token: user.accessToken, body });

  /** Picks `option` in the Mantine select named `name`. */
  async function pick(page: Page, name: string, option: string): Promise<void> {
    await byRole(page, 'combobox', name).click();
    await (await page.waitForSelector(`aria/${option}[role="option"]`))!.click();
  }

  /** The text of the SQL editor (one line), as it is on the page. */
  const editorText = (page: Page) => page.$eval('aria/SQL[role="textbox"]', (el) => el.textContent);

  /**
   * Types `prefix` in the editor, waits for the completion list to offer `word` and takes it with a
   * click (Enter is ignored for the list's first 75 ms, CodeMirror's guard against accidental picks).
   */
  async function complete(page: Page, prefix: string, word: string): Promise<void> {
    await page.keyboard.type(prefix);
    const option = await page.waitForFunction(
      (w) => Array.from(document.querySelectorAll('[role="listbox"] [role="option"]')).find((o) => o.textContent?.startsWith(w)),
      {},
      word,
    );
    await (option.asElement() as ElementHandle<Element>).click();
  }

  /** The cells of the table named `name`, row by row (header first). */
  const tableCells = (page: Page, name: string) => page.$eval(`aria/${name}[role="table"]`, (table) => Array.from(table.querySelectorAll('tr')).map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent ?? '')));

  it('creates a datasource after testing it, browses its schema, writes, runs and publishes a query, and registers an agent', async () => {
    const dsName = 'Orchard warehouse';
    await withAppPage(browser, 'reporting-sources', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'link', 'Reporting').click();
      await byRole(page, 'heading', 'Datasources').wait();
      await waitForText(page, 'No datasources yet.');
      await expectWellBehaved(tab, app.url, 'datasources, none yet');

      // New datasource: the settings typed, "Test connection" on them (nothing saved), then created.
      await byRole(page, 'link', 'New datasource').click();
      await byRole(page, 'heading', 'New datasource').wait();
      await byRole(page, 'textbox', 'Name').fill(dsName);
      await byRole(page, 'textbox', 'Host').fill('127.0.0.1');
      await byRole(page, 'textbox', 'Port').fill('5432');
      await byRole(page, 'textbox', 'Database').fill(source.name);
      await byRole(page, 'textbox', 'User').fill('postgres');
      await byRole(page, 'textbox', 'Password').fill('orchard-secret');
      await pick(page, 'TLS', 'Not encrypted');
      await byRole(page, 'button', 'Test connection').click();
      await waitForRegionText(page, 'Connection test', 'Connected');
      await waitForRegionText(page, 'Connection test', 'PostgreSQL');
      expect((await api('GET', '/api/reporting/datasources')).body.data).toEqual([]);
      await expectWellBehaved(tab, app.url, 'new datasource, tested');

      await byRole(page, 'button', 'Create datasource').click();
      await byRole(page, 'heading', dsName).wait();
      const list = (await api('GET', '/api/reporting/datasources')).body.data;
      expect(list).toHaveLength(1);
      const ds = list[0];
      expect(ds).toMatchObject({ name: dsName, kind: 'postgres', connectionMode: 'direct', config: { host: '127.0.0.1', port: 5432, database: source.name, user: 'postgres', ssl: 'disable' }, secrets: { password: { set: true } } });
      // The password is write-only: not on the page (nor in any field's value), not in the API's answer.
      expect(await page.evaluate(() => document.body.innerText + Array.from(document.querySelectorAll('input, textarea')).map((i) => (i as HTMLInputElement).value).join(' '))).not.toContain('orchard-secret');
      expect(JSON.stringify(ds)).not.toContain('orchard-secret');
      await waitForRegionText(page, 'Connection', 'password set');

      // "Edit": a description and a new password, which replaces the stored one and is shown nowhere either.
      await byRole(page, 'button', 'Edit').click();
      await byRole(page, 'textbox', 'Description').fill('The fruit yard');
      await byRole(page, 'textbox', 'New password').fill('orchard-secret-2');
      await byRole(page, 'button', 'Save').click();
      await page.waitForFunction(() => !document.querySelector('[role="dialog"]'));
      await waitForText(page, 'The fruit yard');
      const edited = (await api('GET', `/api/reporting/datasources/${ds.id}`)).body;
      expect(edited).toMatchObject({ description: 'The fruit yard', config: ds.config, secrets: { password: { set: true } } });
      expect(Date.parse(edited.secrets.password.updatedAt)).toBeGreaterThan(Date.parse(ds.secrets.password.updatedAt));
      expect(JSON.stringify(edited)).not.toContain('orchard-secret-2');
      expect(await page.evaluate(() => document.body.innerText + Array.from(document.querySelectorAll('input, textarea')).map((i) => (i as HTMLInputElement).value).join(' '))).not.toContain('orchard-secret');

      // "Test connection" on the saved datasource: its last test, as the API keeps it.
      await byRole(page, 'button', 'Test connection').click();
      await waitForRegionText(page, 'Connection test', 'Connected');
      await waitForRegionText(page, 'Health', 'Status:ok');
      expect((await api('GET', `/api/reporting/datasources/${ds.id}`)).body.lastTest).toMatchObject({ ok: true });

      // The schema: read, then browsed in the tree to a column with its type.
      await waitForRegionText(page, 'Schema', 'The schema has not been read yet.');
      await byRole(page, 'button', 'Read the schema').click();
      await byRole(page, 'tree', `Tables of ${dsName}`).wait();
      const schema = (await api('GET', `/api/reporting/datasources/${ds.id}/schema`)).body;
      const harvest = schema.tables.find((t: { name: string }) => t.name === 'harvest');
      expect(harvest.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'fruit', 'kilos', 'picked_on']);
      const kilos = harvest.columns.find((c: { name: string }) => c.name === 'kilos');
      const tableItem = byRole(page, 'treeitem', 'harvest, table, 4 columns');
      expect(await page.$eval('aria/public, schema, 1 table[role="treeitem"]', (el) => el.getAttribute('aria-expanded'))).toBe('true');
      expect(await (await tableItem.waitHandle()).evaluate((el) => el.getAttribute('aria-expanded'))).toBe('false');
      await tableItem.click();
      const column = await byRole(page, 'treeitem', `kilos, ${kilos.dataType}, not null`).waitHandle();
      expect(await column.evaluate((el) => el.getAttribute('aria-level'))).toBe('3');
      expect(await (await tableItem.waitHandle()).evaluate((el) => el.getAttribute('aria-expanded'))).toBe('true');
      // The keyboard too: Left closes the table, Down reaches nothing hidden.
      await (await tableItem.waitHandle()).focus();
      await page.keyboard.press('ArrowLeft');
      await page.waitForFunction(() => !document.querySelector('[role="treeitem"][aria-level="3"]'));
      await page.keyboard.press('ArrowRight');
      await byRole(page, 'treeitem', `kilos, ${kilos.dataType}, not null`).wait();
      await page.setViewport({ width: 1280, height: 1200 });
      await keepScreenshot(page, 'reporting-datasource-schema');
      await expectWellBehaved(tab, app.url, 'datasource with its schema tree');

      // Agents: one registered, its token shown once.
      await byRole(page, 'link', 'Datasources').click();
      await byRole(page, 'table', 'Datasources').wait();
      await byRole(page, 'button', 'New agent').click();
      await byRole(page, 'textbox', 'Name').fill('Orchard LAN');
      await byRole(page, 'button', 'Create agent').click();
      const tokenBox = await byRole(page, 'textbox', 'Agent token').waitHandle();
      const token = await tokenBox.evaluate((el) => (el as HTMLInputElement).value);
      expect(token).toMatch(/^fmag_/);
      await byRole(page, 'button', 'Done').click();
      await page.waitForFunction(() => !document.querySelector('[role="dialog"]'));
      await waitForRegionText(page, 'Agents', 'Orchard LAN');
      await waitForRegionText(page, 'Agents', 'never connected');
      expect(await page.evaluate(() => document.body.innerHTML)).not.toContain(token);
      const agents = (await api('GET', '/api/agents')).body.data;
      expect(agents).toMatchObject([{ name: 'Orchard LAN', status: 'never_connected' }]);
      expect(token.startsWith(agents[0].tokenPrefix.replace(/\.\.\.$/, ''))).toBe(true);
      await waitForRegionText(page, 'Agents', agents[0].tokenPrefix);
      await expectWellBehaved(tab, app.url, 'datasources with an agent');

      // A query: written in the editor with completion from the schema, a parameter typed and filled.
      await byRole(page, 'link', 'Queries').click();
      await byRole(page, 'heading', 'Queries').wait();
      await waitForText(page, 'No queries yet.');
      await expectWellBehaved(tab, app.url, 'queries, none yet');
      await byRole(page, 'link', 'New query').click();
      await byRole(page, 'heading', 'New query').wait();
      await byRole(page, 'textbox', 'Name').fill('Heavy pickings');
      await pick(page, 'Datasource', `${dsName} (postgres)`);
      await byRole(page, 'tree', `Tables of ${dsName}`).wait();
      await byRole(page, 'textbox', 'SQL').click();
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await page.keyboard.type('id, ');
      await complete(page, 'fru', 'fruit'); // a column of the schema
      await page.keyboard.type(', kilos FROM ');
      await complete(page, 'harv', 'harvest'); // a table of the schema
      await page.keyboard.type(' WHERE kilos >= {{ min_kilos }} ORDER BY id');
      await page.keyboard.press('Escape');
      const sql = 'SELECT id, fruit, kilos FROM harvest WHERE kilos >= {{ min_kilos }} ORDER BY id';
      expect(await editorText(page)).toBe(sql);
      await byRole(page, 'table', 'Parameter definitions').wait();
      await pick(page, 'Type of min_kilos', 'Number');
      await byRole(page, 'textbox', 'min_kilos').fill('2');
      await byRole(page, 'button', 'Run').click();
      await byRole(page, 'table', 'Preview results').wait();

      // The grid holds the table's rows the parameter selects (numeric as the database writes it).
      const expected = await source.query<{ id: number; fruit: string; kilos: string }>('SELECT id, fruit, kilos FROM harvest WHERE kilos >= $1 ORDER BY id', [2]);
      expect(expected).toHaveLength(2);
      const cells = await tableCells(page, 'Preview results');
      expect(cells.slice(1)).toEqual(expected.map((r) => [String(r.id), r.fruit, r.kilos]));
      expect(cells[0].map((header, i) => header.startsWith(['id', 'fruit', 'kilos'][i]))).toEqual([true, true, true]);
      await waitForRegionText(page, 'Results', '2 rows in');
      const queryId = new URL(page.url()).pathname.split('/').pop()!;
      const saved = (await api('GET', `/api/reporting/queries/${queryId}`)).body;
      expect(saved).toMatchObject({ name: 'Heavy pickings', datasourceId: ds.id, language: 'sql', text: sql, parameters: [{ name: 'min_kilos', type: 'number' }], latestVersion: 0 });
      const preview = await api('POST', `/api/reporting/queries/${queryId}/preview`, { parameters: { min_kilos: 2 } });
      expect(preview.body.rows).toEqual(expected.map((r) => ({ id: r.id, fruit: r.fruit, kilos: r.kilos })));
      await keepScreenshot(page, 'reporting-query-editor');
      await expectWellBehaved(tab, app.url, 'query editor with results');

      // A text the API refuses: its problem shown under the editor and marked in it, the draft unchanged.
      await byRole(page, 'textbox', 'SQL').click();
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await page.keyboard.type('; DROP TABLE harvest');
      await page.keyboard.press('Escape');
      await byRole(page, 'button', 'Save draft').click();
      const problems = await byRole(page, 'list', 'Problems in the SQL').waitHandle();
      expect(await problems.evaluate((el) => el.textContent)).toContain('MULTIPLE_STATEMENTS');
      expect((await api('GET', `/api/reporting/queries/${queryId}`)).body.text).toBe(sql);
      // Deleting what was typed takes the text back.
      await byRole(page, 'textbox', 'SQL').click();
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      for (let i = 0; i < '; DROP TABLE harvest'.length; i++) await page.keyboard.press('Backspace');
      expect(await editorText(page)).toBe(sql);

      // Publish: version 1 in the list, as the API has it; its SQL shown as published.
      await byRole(page, 'textbox', 'Release notes').fill('First cut');
      await byRole(page, 'button', 'Publish').click();
      await waitForText(page, 'Published version 1.');
      await byRole(page, 'table', 'Versions of the query').wait();
      const versions = (await api('GET', `/api/reporting/queries/${queryId}/versions`)).body;
      expect(versions).toMatchObject([{ version: 1, releaseNotes: 'First cut' }]);
      const row = (await tableCells(page, 'Versions of the query'))[1];
      expect([row[0], row[2], row[3]]).toEqual(['1', versions[0].publishedBy, 'First cut']);
      await byRole(page, 'button', 'View version 1').click();
      const dialog = await byRole(page, 'dialog', 'Version 1').waitHandle();
      await page.waitForFunction((el, text) => el.textContent?.includes(text), {}, dialog, sql);
      await expectWellBehaved(tab, app.url, 'a version of the query');
      await closeDialog(page);
      expect((await api('GET', `/api/reporting/queries/${queryId}`)).body).toMatchObject({ isPublished: true, latestVersion: 1 });

      // The list shows it published.
      await byRole(page, 'link', 'Queries').click();
      await byRole(page, 'table', 'Queries').wait();
      expect((await tableCells(page, 'Queries'))[1].slice(0, 4)).toEqual(['Heavy pickings', dsName, 'min_kilos', 'version 1']);
      await expectWellBehaved(tab, app.url, 'queries');
    });
  });
});
