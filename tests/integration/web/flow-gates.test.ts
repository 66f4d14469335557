import type { Browser } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, closeDialog, expectWellBehaved, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { choose, codeEditorText, tableRows, typeInCodeEditor } from '../../support/gates-web';
import { addMember } from '../../support/teams';
import { createTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * Flow gates in the dashboard (docs/web.md "Flow: gates"): a gate built in the app with two fields
 * and a rule, tried in the test console with a passing and two failing samples (the rule's error in
 * the business-rules layer, a too-short name in the schema layer), each verdict the API's own; then
 * edited (a third field, a delivery channel whose secret is never shown again, a rate limit), its
 * versions read, paused, archived, found by the list's filters and deleted. A viewer sees no edit
 * control and the API refuses the edit.
 */
describe('Flow gates in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  let w: FlowWorkspace;
  let gateId: string;
  const secret = 'whsec-delivery-secret-4711';
  const ruleMessage = 'Totals of 1000 or more need a purchase order';
  beforeAll(async () => {
    ({ app, browser } = await startAppWithBrowser());
    w = await flowWorkspace(app);
  });
  afterAll(async () => {
    await closeAppWithBrowser(app, browser);
  });

  const gateOf = async (id: string) => (await app.request('GET', `/api/flow/gates/${id}`, { token: w.key })).body;
  const dryRun = async (id: string, payload: unknown) => (await app.request('POST', `/api/flow/gates/${id}/test`, { token: w.key, body: payload })).body;

  it('builds a gate with fields and a rule, tests it in the console, edits, pauses, archives and deletes it', async () => {
    await withAppPage(browser, 'flow-gates', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, w.user.email, w.user.password);
      await byRole(page, 'link', 'Flow').click();
      await byRole(page, 'heading', 'Gates').wait();
      await waitForText(page, 'No gates yet');
      await expectWellBehaved(tab, app.url, 'the empty gate list');

      // The builder: two fields and a rule.
      await byRole(page, 'link', 'New gate').click();
      await byRole(page, 'heading', 'New gate').wait();
      await byRole(page, 'textbox', 'Name').fill('Invoices');
      await byRole(page, 'button', 'Add a field').click();
      await byRole(page, 'textbox', 'Field 1 name').fill('customer');
      await byRole(page, 'checkbox', 'Field 1 required').click();
      await byRole(page, 'textbox', 'Field 1 min length').fill('2');
      await byRole(page, 'button', 'Add a field').click();
      await byRole(page, 'textbox', 'Field 2 name').fill('total');
      await choose(page, 'Field 2 type', 'Number');
      await byRole(page, 'textbox', 'Field 2 minimum').fill('0');
      await byRole(page, 'checkbox', 'Field 2 required').click();
      // The JSON view follows the builder.
      await page.waitForFunction((el) => (el as HTMLElement).innerText.includes('"min": 0'), {}, await byRole(page, 'textbox', 'Schema (JSON)').waitHandle());
      const json = JSON.parse(await codeEditorText(page, 'Schema (JSON)'));
      expect(json).toEqual({ type: 'object', properties: { customer: { type: 'string', required: true, minLength: 2 }, total: { type: 'number', min: 0, required: true } } });
      await byRole(page, 'button', 'Add a rule').click();
      await byRole(page, 'textbox', 'Rule 1 id').fill('under-1000');
      await byRole(page, 'textbox', 'Rule 1 name').fill('Total under 1000');
      await typeInCodeEditor(page, 'Rule 1 expression', 'total < 1000');
      await byRole(page, 'textbox', 'Rule 1 message').fill(ruleMessage);
      await expectWellBehaved(tab, app.url, 'the schema builder');
      // A taller window for the pictures: the builder beside its JSON, the console with its result.
      await page.setViewport({ width: 1280, height: 1400 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await keepScreenshot(page, 'gate-builder');

      await byRole(page, 'button', 'Create gate').click();
      await byRole(page, 'heading', 'Invoices').wait();
      await waitForText(page, 'schema version 1');
      gateId = new URL(page.url()).pathname.split('/').pop()!;
      const created = await gateOf(gateId);
      expect(created).toMatchObject({
        name: 'Invoices',
        status: 'active',
        schemaVersion: 1,
        schema: { type: 'object', properties: { customer: { type: 'string', required: true, minLength: 2 }, total: { type: 'number', min: 0, required: true } } },
        businessRules: [{ id: 'under-1000', name: 'Total under 1000', expression: 'total < 1000', message: ruleMessage }],
      });

      // The console: a passing sample, one breaking the rule, one failing the schema.
      await byRole(page, 'tab', 'Test console').click();
      const samples: Array<[string, unknown]> = [
        ['{"customer": "Ada", "total": 120}', { customer: 'Ada', total: 120 }],
        ['{"customer": "Ada", "total": 5000}', { customer: 'Ada', total: 5000 }],
        ['{"customer": "A", "total": 5}', { customer: 'A', total: 5 }],
      ];
      await typeInCodeEditor(page, 'Sample payload', samples[0][0], { replace: true });
      await byRole(page, 'button', 'Test').click();
      await waitForRegionText(page, 'Test result', 'Valid');
      expect(await tableRows(page, 'Layers')).toEqual([
        ['Schema', 'pass'],
        ['Business rules', 'pass'],
      ]);
      expect(await dryRun(gateId, samples[0][1])).toMatchObject({ valid: true, layers: { schema: 'pass', business_rules: 'pass' } });

      await typeInCodeEditor(page, 'Sample payload', samples[1][0], { replace: true });
      await byRole(page, 'button', 'Test').click();
      await waitForRegionText(page, 'Test result', 'Invalid');
      await waitForRegionText(page, 'Test result', 'Failed layer: Business rules');
      expect(await tableRows(page, 'Layers')).toEqual([
        ['Schema', 'pass'],
        ['Business rules', 'fail'],
      ]);
      const ruleSteps = await tableRows(page, 'Steps');
      expect(ruleSteps).toEqual([
        ['schema', 'Schema', 'pass', 'none'],
        ['Total under 1000total < 1000', 'Business rules', 'fail', `under-1000 (RULE): ${ruleMessage}`],
      ]);
      const apiSays = await dryRun(gateId, samples[1][1]);
      expect(apiSays).toMatchObject({ valid: false, failedLayer: 'business_rules', steps: [{ status: 'pass' }, { ruleId: 'under-1000', status: 'fail', errors: [{ field: 'under-1000', code: 'RULE', message: ruleMessage }] }] });
      await expectWellBehaved(tab, app.url, 'the test console');
      await page.setViewport({ width: 1280, height: 860 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await keepScreenshot(page, 'gate-console');

      await typeInCodeEditor(page, 'Sample payload', samples[2][0], { replace: true });
      await byRole(page, 'button', 'Test').click();
      await waitForRegionText(page, 'Test result', 'Failed layer: Schema');
      expect(await tableRows(page, 'Layers')).toEqual([
        ['Schema', 'fail'],
        ['Business rules', 'skipped'],
      ]);
      const schemaSteps = await tableRows(page, 'Steps');
      expect(schemaSteps[1].slice(1, 4)).toEqual(['Business rules', 'skipped', 'none']);
      const schemaError = (await dryRun(gateId, samples[2][1])).steps[0].errors[0];
      expect(schemaError).toMatchObject({ field: 'customer', code: 'MIN_LENGTH' });
      expect(schemaSteps[0]).toEqual(['schema', 'Schema', 'fail', `customer (MIN_LENGTH): ${schemaError.message}`]);

      // Editing: a third field, a delivery channel with its secret, a rate limit.
      await byRole(page, 'tab', 'Schema and rules').click();
      await byRole(page, 'button', 'Add a field').click();
      await byRole(page, 'textbox', 'Field 3 name').fill('email');
      await choose(page, 'Field 3 format', 'E-mail address');
      await byRole(page, 'tab', 'Render, approval, delivery').click();
      await byRole(page, 'button', 'Add a channel').click();
      await byRole(page, 'textbox', 'Channel 1 URL').fill('https://example.com/hooks/invoices');
      await page.locator('aria/Channel 1 secret').fill(secret);
      await byRole(page, 'textbox', 'Submissions per minute').fill('60');
      await waitForText(page, 'saving makes schema version 2');
      await expectWellBehaved(tab, app.url, 'the gate settings');
      await keepScreenshot(page, 'gate-settings');
      await byRole(page, 'button', 'Save changes').click();
      await waitForText(page, 'All changes saved');
      await waitForText(page, 'schema version 2');
      const edited = await gateOf(gateId);
      expect(edited).toMatchObject({
        schemaVersion: 2,
        maxSubmissionsPerMinute: 60,
        deliveryChannels: [{ type: 'webhook', url: 'https://example.com/hooks/invoices', secret: { set: true } }],
      });
      expect(edited.schema.properties.email).toEqual({ type: 'string', format: 'email' });
      // Write-only: the secret is on no page once saved, not even after a reload.
      expect(await page.evaluate(() => document.body.innerHTML)).not.toContain(secret);
      await page.reload();
      await byRole(page, 'heading', 'Invoices').wait();
      await byRole(page, 'tab', 'Render, approval, delivery').click();
      const shownSecret = await page.locator('aria/Channel 1 secret').waitHandle();
      expect(await shownSecret.evaluate((input) => [(input as HTMLInputElement).value, (input as HTMLInputElement).placeholder])).toEqual(['', 'Stored (write-only)']);
      expect(await page.evaluate(() => document.body.innerHTML)).not.toContain(secret);

      // The versions: two, the first without the e-mail field.
      await byRole(page, 'tab', 'Versions').click();
      await waitForRegionText(page, 'Schema versions', 'Schema saved');
      expect((await tableRows(page, 'Versions')).map((r) => r.slice(0, 4))).toEqual([
        ['2 (current)', 'Schema saved', '3', '1'],
        ['1', 'Created', '2', '1'],
      ]);
      await byRole(page, 'button', 'View version 1').click();
      const version1 = await byRole(page, 'dialog', 'Version 1').waitHandle();
      const shownSchema = await version1.evaluate((d) => d.textContent ?? '');
      expect(shownSchema).toContain('"customer"');
      expect(shownSchema).not.toContain('"email"');
      await expectWellBehaved(tab, app.url, 'a schema version');
      await closeDialog(page);

      // Import from a template: its draft variables become version 3; the rule stays.
      await createTemplate(app, w.user.accessToken, { name: 'Letter to import' });
      await choose(page, 'Template to import', 'Letter to import');
      await byRole(page, 'button', 'Import its variables').click();
      await waitForRegionText(page, 'Import from a template', 'Imported: schema version 3');
      await waitForRegionText(page, 'Schema versions', 'Imported from a template');
      const imported = await gateOf(gateId);
      expect(imported).toMatchObject({ schemaVersion: 3, businessRules: [{ id: 'under-1000' }] });
      expect(Object.keys(imported.schema.properties).sort()).toEqual(['customer', 'dueDate', 'items']);
      await keepScreenshot(page, 'gate-versions');
      await byRole(page, 'tab', 'Schema and rules').click();
      expect(await regionText(page, 'Schema builder')).toContain('Each item of items');
      expect(JSON.parse(await codeEditorText(page, 'Schema (JSON)'))).toEqual(imported.schema);
      await byRole(page, 'tab', 'Versions').click();

      // Pause: submissions refused, the console still answers; resume; archive.
      await byRole(page, 'button', 'Pause').click();
      await byRole(page, 'button', 'Resume').wait();
      expect((await gateOf(gateId)).status).toBe('paused');
      const refused = await app.request('POST', `/api/flow/gates/${gateId}/validate`, { token: w.key, body: { customer: 'Ada', total: 1 } });
      expect([refused.status, refused.body.code]).toEqual([409, 'FLOW.GATE_PAUSED']);
      await waitForText(page, 'This gate is paused');
      await byRole(page, 'button', 'Resume').click();
      await byRole(page, 'button', 'Pause').wait();
      expect((await gateOf(gateId)).status).toBe('active');
      await byRole(page, 'button', 'Archive the gate').click();
      await byRole(page, 'dialog', 'Archive the gate?').wait();
      await byRole(page, 'button', 'Archive').click();
      await byRole(page, 'button', 'Restore').wait();
      expect((await gateOf(gateId)).status).toBe('archived');

      // The list: search and the status filter.
      await byRole(page, 'link', 'Gates').click();
      await byRole(page, 'table', 'Gates').wait();
      await choose(page, 'Status', 'Active');
      await waitForText(page, 'No gate matches.');
      await choose(page, 'Status', 'Archived');
      await waitForText(page, '3 fields, 1 rules');
      expect((await tableRows(page, 'Gates')).map((r) => [r[0], r[1], r[2]])).toEqual([[expect.stringContaining('Invoices'), 'archived', '3 fields, 1 rules']]);
      await byRole(page, 'textbox', 'Search gates').fill('nothing-like-it');
      await waitForText(page, 'No gate matches.');
      await expectWellBehaved(tab, app.url, 'the gate list');
    });
  });

  it('shows a viewer the gate without edit controls, and the API refuses the edit', async () => {
    const viewer = await addMember(app, w.user, w.projectId, 'viewer');
    const teams = await app.request('GET', '/api/teams', { token: w.user.accessToken });
    const project = (teams.body.data as Array<{ id: string; name: string }>).find((t) => t.id === w.projectId)!;
    await withAppPage(browser, 'flow-gates-viewer', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, viewer.email, viewer.password);
      await byRole(page, 'heading', 'Templates').wait();
      await byRole(page, 'combobox', 'Project').click();
      await (await page.waitForSelector(`aria/${project.name}[role="option"]`))!.click();
      await byRole(page, 'link', 'Flow').click();
      await byRole(page, 'link', 'Invoices').click();
      await byRole(page, 'heading', 'Invoices').wait();
      await waitForText(page, 'You can read this gate');
      expect(await regionText(page, 'Schema builder')).toContain('Refuse fields the schema does not list');
      const buttons = await page.$$eval('button, a', (all) => all.map((b) => b.textContent?.trim()));
      expect(buttons.filter((b) => ['New gate', 'Save changes', 'Create gate', 'Pause', 'Resume', 'Restore', 'Archive', 'Delete', 'Add a field', 'Add a rule', 'Remove', 'Add a channel', 'Import its variables'].includes(b ?? ''))).toEqual([]);
      expect(await (await byRole(page, 'textbox', 'Field 1 name').waitHandle()).evaluate((i) => (i as HTMLInputElement).readOnly)).toBe(true);
      await expectWellBehaved(tab, app.url, 'a gate as a viewer');
      await byRole(page, 'link', 'Gates').click();
      await byRole(page, 'table', 'Gates').wait();
      expect(await page.$('aria/New gate[role="link"]')).toBeNull();
    });
    const refused = await app.request('PUT', `/api/flow/gates/${gateId}`, { token: viewer.accessToken, headers: { 'X-Team-Id': w.projectId }, body: { status: 'active' } });
    expect(refused.status).toBe(403);
    expect((await gateOf(gateId)).status).toBe('archived');
  });

  it('deletes a gate from its page', async () => {
    await withAppPage(browser, 'flow-gates-delete', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, w.user.email, w.user.password);
      await byRole(page, 'heading', 'Templates').wait();
      await page.goto(`${app.url}/flow/gates/${gateId}`);
      await byRole(page, 'heading', 'Invoices').wait();
      await byRole(page, 'button', 'Delete the gate').click();
      await byRole(page, 'dialog', 'Delete the gate?').wait();
      await byRole(page, 'button', 'Delete').click();
      await waitForText(page, 'Invoices was deleted');
      await waitFor(async () => (await app.request('GET', `/api/flow/gates/${gateId}`, { token: w.key })).status === 404, { what: 'the gate deleted' });
      await expectWellBehaved(tab, app.url, 'the list after a delete');
    });
  });
});
