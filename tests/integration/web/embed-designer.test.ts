import type { Browser, Frame, Page } from 'puppeteer';
import type { TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, signInThroughApp, startAppWithBrowser, waitForText, withAppPage } from '../../support/browser';
import { criticalAxeViolationsIn, startExampleSite, startFramingSite, type Site } from '../../support/embedding';
import { signUp, type SignedUpUser } from '../../support/factories';
import { personalProjectId } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * The designer in the customer's own app (docs/embedding.md, docs/web.md "The designer in another
 * app"): the docs' example server, on a port of its own whose origin is on the project's list, mints
 * a token with an API key and frames the designer; in Chromium the designer loads in the frame, an
 * edit is saved, "Publish" publishes, and the parent page hears `saved` and `published`. A page of an
 * origin not on the list is refused by frame-ancestors, and the token reaches no other route.
 */
describe('the designer embedded in another site', () => {
  let app: TestApp;
  let browser: Browser;
  const sites: Site[] = [];
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(async () => {
    for (const site of sites) await site.close();
    await closeAppWithBrowser(app, browser);
  });

  /** A verified user, their personal project, the invoice example as a template, and a key that may mint embed tokens. */
  async function workspace(): Promise<{ user: SignedUpUser; projectId: string; templateId: string; key: string; keyId: string }> {
    const user = await signUp(app, { verified: true });
    const projectId = await personalProjectId(app, user.id);
    const example = await app.request('POST', '/api/templates/examples/invoice', { token: user.accessToken });
    expect(example.status).toBe(201);
    const key = await createKey(app, user.accessToken, { name: 'embedding', permissions: { embed_designer: true } });
    return { user, projectId, templateId: example.body.templateId, key: key.plainKey, keyId: key.id };
  }

  async function allowOrigins(user: SignedUpUser, projectId: string, origins: string[]): Promise<void> {
    const res = await app.request('PUT', `/api/teams/${projectId}/embed-origins`, { token: user.accessToken, body: { origins } });
    expect([res.status, res.body]).toEqual([200, { origins }]);
  }

  /** The designer's frame in the page, once its document is the app's. */
  async function designerFrame(page: Page, title: string): Promise<Frame> {
    const handle = await page.waitForSelector(`iframe[title="${title}"]`);
    const frame = (await handle!.contentFrame())!;
    await frame.waitForSelector('aria/Designer[role="main"]');
    return frame;
  }

  const regionIn = (frame: Frame, name: string) => frame.locator(`aria/${name}[role="region"]`);
  async function waitForFrameRegionText(frame: Frame, name: string, text: string): Promise<void> {
    const region = await regionIn(frame, name).waitHandle();
    await frame.waitForFunction((el, t) => el.textContent?.includes(t), {}, region, text);
  }

  type Received = { origin: string; data: Record<string, unknown> };
  const received = (page: Page) => page.evaluate(() => (window as unknown as { designerEvents: Received[] }).designerEvents);

  it("loads in an allowed origin's page, saves an edit, publishes, and tells the parent page `saved` and `published`", async () => {
    const { user, projectId, templateId, key } = await workspace();
    const site = await startExampleSite({ FORMWORK_URL: app.url, FORMWORK_API_KEY: key, TEMPLATE_ID: templateId });
    sites.push(site);
    // The project's list, set on the Team page: a wildcard refused with the API's message, then the site's origin.
    await withAppPage(browser, 'embed-origins', async (tab) => {
      const { page } = tab;
      await signInThroughApp(page, app.url, user.email, user.password);
      await byRole(page, 'link', 'Team').click();
      const field = byRole(page, 'textbox', 'Sites that may embed the designer');
      await field.fill('https://*.customer.example');
      await byRole(page, 'button', 'Save the sites').click();
      await waitForText(page, 'must name one host: no wildcard (ERR_VALID_001)');
      expect((await app.request('GET', `/api/teams/${projectId}/embed-origins`, { token: user.accessToken })).body).toEqual({ origins: [] });
      await field.fill(site.origin);
      await byRole(page, 'button', 'Save the sites').click();
      await waitForText(page, 'Sites saved');
      await (await byRole(page, 'region', 'Embedded designer').waitHandle()).scrollIntoView();
      await keepScreenshot(page, 'embed-origins');
      expect((await app.request('GET', `/api/teams/${projectId}/embed-origins`, { token: user.accessToken })).body).toEqual({ origins: [site.origin] });
      await expectWellBehaved(tab, app.url, 'team page, embedded designer sites');
    });
    const versionsBefore = (await app.request('GET', `/api/templates/${templateId}/versions`, { token: user.accessToken })).body as unknown[];

    await withAppPage(browser, 'embed-designer', async (tab) => {
      const { page } = tab;
      await page.setViewport({ width: 1500, height: 1100 });
      await page.goto(`${site.origin}/`);
      const frame = await designerFrame(page, 'Invoice designer');
      for (const region of ['Outline', 'Components', 'Canvas', 'Properties', 'Sample data', 'Preview']) await regionIn(frame, region).wait();
      await waitForFrameRegionText(frame, 'Preview', 'Invoice INV-2026-014');
      // The token left the frame's address at once, and nothing was kept in storage.
      expect(await frame.evaluate(() => window.location.href)).toBe(`${app.url}/embed/designer/${templateId}`);
      expect(await frame.evaluate(() => [localStorage.length, sessionStorage.length])).toEqual([0, 0]);
      // No navigation, no link back into the dashboard.
      expect(await frame.$('aria/Main[role="navigation"]')).toBeNull();
      expect(await frame.$('aria/Back to the template[role="link"]')).toBeNull();
      await waitFor(async () => (await received(page)).some((m) => m.data.type === 'ready'), { what: 'the ready message' });

      // An edit in the frame, saved as the draft and reported to the parent page.
      const canvas = await regionIn(frame, 'Canvas').waitHandle();
      await (await canvas.waitForSelector('::-p-text(Heading · title)'))!.click();
      const text = await frame.locator('aria/Text[role="textbox"]').waitHandle();
      await text.evaluate((el) => {
        const input = el as HTMLInputElement;
        const at = input.value.indexOf('Invoice');
        input.focus();
        input.setSelectionRange(at, at + 'Invoice'.length);
      });
      await page.keyboard.sendCharacter('Rechnung');
      await waitForFrameRegionText(frame, 'Preview', 'Rechnung INV-2026-014');
      const stored = await waitFor(
        async () => {
          const res = await app.request('GET', `/api/templates/${templateId}`, { token: user.accessToken });
          return JSON.stringify(res.body.schema).includes('Rechnung {{number}}') ? res.body : undefined;
        },
        { what: 'the draft saved' },
      );
      const saved = await waitFor(async () => (await received(page)).find((m) => m.data.type === 'saved'), { what: 'the saved message' });
      expect(saved).toEqual({ origin: app.url, data: { source: 'formwork-designer', type: 'saved', templateId, savedAt: expect.any(String) } });
      expect(Date.parse(saved.data.savedAt as string)).toBeLessThanOrEqual(Date.parse(stored.updatedAt));

      // "Publish" in the frame: a new version, and the parent hears which.
      await frame.locator('aria/Publish[role="button"]').click();
      await frame.locator('aria/Publish version[role="button"]').click();
      const versions = await waitFor(
        async () => {
          const list = (await app.request('GET', `/api/templates/${templateId}/versions`, { token: user.accessToken })).body as Array<{ id: string; version: number }>;
          return list.length === versionsBefore.length + 1 ? list : undefined;
        },
        { what: 'a new version' },
      );
      const published = await waitFor(async () => (await received(page)).find((m) => m.data.type === 'published'), { what: 'the published message' });
      expect(published).toEqual({ origin: app.url, data: { source: 'formwork-designer', type: 'published', templateId, version: versions[0].version, versionId: versions[0].id, publishedAt: expect.any(String) } });
      const version = await app.request('GET', `/api/templates/${templateId}/versions/${versions[0].version}`, { token: user.accessToken });
      expect(JSON.stringify(version.body.schema)).toContain('Rechnung {{number}}');
      // The parent page lists what it heard, as a person reads it.
      await page.waitForFunction((n) => document.querySelectorAll('#events li').length >= n, {}, 3);
      const list = await page.locator('aria/Designer events[role="list"]').waitHandle();
      const events = await list.$$eval('li', (items) => items.map((li) => li.textContent));
      expect(events).toEqual(expect.arrayContaining(['Designer ready (edit)', `Published version ${versions[0].version}`]));
      // Every message came from the app's origin, and only the parent's two origins were asked for anything.
      expect((await received(page)).every((m) => m.origin === app.url)).toBe(true);
      await keepScreenshot(page, 'embedded-designer');

      expect(tab.requests.filter((url) => !url.startsWith(`${site.origin}/`) && !url.startsWith(`${app.url}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
      expect(tab.violations).toEqual([]);
      expect(await criticalAxeViolationsIn(frame)).toEqual([]);
    });
  });

  it('is refused by frame-ancestors in a page of an origin not on the list; other pages stay unframable', async () => {
    const { user, projectId, templateId } = await workspace();
    const allowed = 'https://app.customer.example';
    await allowOrigins(user, projectId, [allowed]);
    const minted = await app.request('POST', `/api/templates/${templateId}/embed-tokens`, { token: user.accessToken, body: { mode: 'edit' } });
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({ token: expect.stringMatching(/^fmed_[0-9A-Za-z]{40}$/), url: `${app.url}/embed/designer/${templateId}?token=${minted.body.token}`, expiresAt: expect.any(String), mode: 'edit', origin: allowed, templateId });
    // One hour by default.
    expect(Math.round((Date.parse(minted.body.expiresAt) - Date.now()) / 60_000)).toBe(60);

    // The page's own headers: its token's origin alone may frame it; any other page of the app none.
    const pageRes = await fetch(minted.body.url, { headers: { accept: 'text/html' } });
    const policy = pageRes.headers.get('content-security-policy')!;
    expect(policy).toContain(`frame-ancestors ${allowed}`);
    expect(pageRes.headers.get('x-frame-options')).toBeNull();
    for (const path of ['/templates', `/embed/designer/${templateId}`, `/embed/designer/${templateId}?token=fmed_unknown`]) {
      const other = await fetch(`${app.url}${path}`, { headers: { accept: 'text/html' } });
      expect([path, other.headers.get('content-security-policy')]).toEqual([path, expect.stringContaining("frame-ancestors 'none'")]);
      expect(other.headers.get('x-frame-options')).toBe('DENY');
    }

    const stranger = await startFramingSite(minted.body.url, 'Stolen designer');
    sites.push(stranger);
    await withAppPage(browser, 'embed-designer-refused', async ({ page, violations, requests }) => {
      await page.goto(`${stranger.origin}/`);
      // Chromium refuses the frame and says why.
      await waitFor(() => violations.find((v) => v.includes('frame-ancestors')), { what: 'the frame-ancestors refusal' });
      expect(requests).toContain(minted.body.url);
      // The frame holds no document of the app (the app's page carries its CSP nonce in a meta element).
      const frames = page.frames().filter((f) => f !== page.mainFrame());
      expect(frames).toHaveLength(1);
      expect(await frames[0].evaluate(() => document.querySelector('meta[name="csp-nonce"]') !== null).catch(() => false)).toBe(false);
    });
  });

  it('keeps the token to its own template and the designer: every other route refuses it, view mode cannot save, an expired one is refused', async () => {
    const { user, projectId, templateId, key, keyId } = await workspace();
    const other = await app.request('POST', '/api/templates/examples/quote', { token: user.accessToken });
    await allowOrigins(user, projectId, ['https://app.customer.example']);
    const mint = async (mode: 'edit' | 'view', body: Record<string, unknown> = {}) => {
      const res = await app.request('POST', `/api/templates/${templateId}/embed-tokens`, { token: user.accessToken, body: { mode, ...body } });
      expect(res.status).toBe(201);
      return res.body as { token: string; url: string; expiresAt: string };
    };
    const edit = await mint('edit');
    const as = (token: string, body?: unknown) => ({ token, ...(body === undefined ? {} : { body }) });

    // What the designer calls works.
    expect((await app.request('GET', `/api/templates/${templateId}`, as(edit.token))).status).toBe(200);
    expect((await app.request('GET', '/api/embed/session', as(edit.token))).body).toEqual({ templateId, mode: 'edit', origin: 'https://app.customer.example', expiresAt: edit.expiresAt });

    // Everything else is refused, before any route runs.
    const refused: Array<[string, string, unknown?]> = [
      ['GET', '/api/templates'],
      ['GET', `/api/templates/${other.body.templateId}`],
      ['PUT', `/api/templates/${other.body.templateId}`, { name: 'taken' }],
      ['GET', `/api/v1/templates/${templateId}`],
      ['GET', `/api/templates/${templateId}/versions`],
      ['GET', `/api/templates/${templateId}/export`],
      ['DELETE', `/api/templates/${templateId}`],
      ['POST', `/api/templates/${templateId}/embed-tokens`, { mode: 'edit' }],
      ['POST', '/api/documents/generate', { templateId, variables: {} }],
      ['GET', '/api/teams'],
      ['GET', `/api/teams/${projectId}/embed-origins`],
      ['GET', '/api/users/me'],
      ['GET', '/api/api-keys'],
      ['POST', '/api/assets', {}],
      ['GET', '/api/flow/gates'],
    ];
    for (const [method, path, body] of refused) {
      const res = await app.request(method as 'GET', path, as(edit.token, body));
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_EMBED_002']);
    }

    // A view token reads and previews, and changes nothing.
    const view = await mint('view', { ttlSeconds: 60 });
    expect((await app.request('GET', `/api/templates/${templateId}`, as(view.token))).status).toBe(200);
    const sample = await app.request('GET', `/api/templates/${templateId}/sample-data`, as(view.token));
    const preview = await app.request('POST', `/api/templates/${templateId}/preview`, as(view.token, { variables: sample.body.data, format: 'pdf' }));
    expect(preview.status).toBe(200);
    const before = (await app.request('GET', `/api/templates/${templateId}`, as(user.accessToken))).body;
    for (const [method, path, body] of [
      ['PUT', `/api/templates/${templateId}`, { name: 'changed' }],
      ['PUT', `/api/templates/${templateId}/sample-data`, { data: {} }],
      ['POST', `/api/templates/${templateId}/publish`, {}],
    ] as const) {
      const res = await app.request(method, path, as(view.token, body));
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_EMBED_003']);
    }
    expect((await app.request('GET', `/api/templates/${templateId}`, as(user.accessToken))).body.updatedAt).toBe(before.updatedAt);

    // In the browser, opened on its own: read only, no palette, no "Publish"; the token gone from the address.
    await withAppPage(browser, 'embed-designer-view', async (tab) => {
      const { page } = tab;
      await page.setViewport({ width: 1440, height: 1000 });
      await page.goto(view.url);
      await page.locator('aria/Preview[role="region"]').wait();
      await page.waitForFunction(() => document.body.textContent?.includes('read only'));
      expect(page.url()).toBe(`${app.url}/embed/designer/${templateId}`);
      expect(await page.$('aria/Components[role="region"]')).toBeNull();
      expect(await page.$('aria/Publish[role="button"]')).toBeNull();
      await keepScreenshot(page, 'embedded-designer-view');
      await expectWellBehaved(tab, app.url, 'embedded designer, view mode');

      // Without a token, and with an expired one, the page says so.
      await page.goto(`${app.url}/embed/designer/${templateId}`);
      await page.waitForFunction(() => document.body.textContent?.includes('No designer link'));
      await app.services.db.query(`UPDATE embed_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [edit.token]);
      await page.goto(edit.url);
      await page.waitForFunction(() => document.body.textContent?.includes('This designer link no longer works'));
      expect(await page.evaluate(() => document.body.textContent)).toContain('ERR_EMBED_001');
      await expectWellBehaved(tab, app.url, 'embedded designer, expired');
    });

    // The expired token is refused everywhere, its own template included.
    for (const path of [`/api/templates/${templateId}`, '/api/embed/session', '/api/templates']) {
      const res = await app.request('GET', path, as(edit.token));
      expect([path, res.status, res.body.code]).toEqual([path, 401, 'ERR_EMBED_001']);
    }
    // A token lives no longer than its minter's right to mint: a key's token ends when the key is revoked.
    const byKey = await app.request('POST', `/api/templates/${templateId}/embed-tokens`, { token: key, body: { mode: 'edit' } });
    expect((await app.request('GET', `/api/templates/${templateId}`, as(byKey.body.token))).status).toBe(200);
    expect((await app.request('PATCH', `/api/api-keys/${keyId}`, as(user.accessToken, { isActive: false }))).status).toBe(200);
    expect((await app.request('GET', `/api/templates/${templateId}`, as(byKey.body.token))).body.code).toBe('ERR_EMBED_001');
    // Taking the origin off the list ends the live view token at once.
    expect((await app.request('GET', `/api/templates/${templateId}`, as(view.token))).status).toBe(200);
    await allowOrigins(user, projectId, []);
    expect((await app.request('GET', `/api/templates/${templateId}`, as(view.token))).body.code).toBe('ERR_EMBED_001');
  });
});
