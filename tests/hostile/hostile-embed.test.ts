import type { TestApp } from '../support/app';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { createKey } from '../support/api-keys';
import { signUp, type SignedUpUser } from '../support/factories';
import { buildTemplate, personalProjectId } from '../support/templates';

/**
 * Hostile input to the embedded designer's settings (docs/embedding.md) against the API role in a
 * process of its own: the project's list of origins (whose entries go verbatim into a page's
 * `frame-ancestors` and are the `targetOrigin` of the designer's messages) and the body that mints an
 * embed token. Every case is a catalogued 400 naming the field, nothing is stored, and the page's
 * header never carries what was refused.
 */
describe('hostile input to the embedded designer settings', () => {
  let api: ApiProcess;
  let app: TestApp;
  let user: SignedUpUser;
  let projectId: string;
  let templateId: string;

  beforeAll(async () => {
    api = await startApiProcess();
    app = api.app;
    user = await signUp(app);
    // Confirmed (API keys need it): this process has no mail server to follow the link from.
    await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
    projectId = await personalProjectId(app, user.id);
    const template = await app.request('POST', '/api/templates', { token: user.accessToken, body: buildTemplate() });
    templateId = template.body.id;
  });
  afterAll(() => api?.close());

  const putOrigins = (origins: unknown) => app.request('PUT', `/api/teams/${projectId}/embed-origins`, { token: user.accessToken, body: { origins } });

  it('refuses origins that are not exactly an origin: wildcards, paths, schemes, case, default ports, header injection, too many, duplicates, not strings', async () => {
    const cases: Array<[unknown, string]> = [
      [['*'], 'origins.0'],
      [['https://*.customer.example'], 'origins.0'],
      [['https://customer.example/'], 'origins.0'],
      [['https://customer.example/app'], 'origins.0'],
      [['https://customer.example?x=1'], 'origins.0'],
      [['https://customer.example#top'], 'origins.0'],
      [['javascript:alert(1)'], 'origins.0'],
      [['data:text/html,<script>alert(1)</script>'], 'origins.0'],
      [['file:///etc/passwd'], 'origins.0'],
      [['ftp://customer.example'], 'origins.0'],
      [['null'], 'origins.0'],
      [["'self'"], 'origins.0'],
      [['HTTPS://CUSTOMER.EXAMPLE'], 'origins.0'],
      [['https://customer.example:443'], 'origins.0'],
      [['http://customer.example:80'], 'origins.0'],
      [['https://user:secret@customer.example'], 'origins.0'],
      [['https://customer.example; script-src *'], 'origins.0'],
      [['https://customer.example\r\nSet-Cookie: a=b'], 'origins.0'],
      [['https://customer.example https://evil.example'], 'origins.0'],
      [['https://exa mple.com'], 'origins.0'],
      [[`https://${'a'.repeat(300)}.example`], 'origins.0'],
      [['https://ok.example', 'https://ok.example'], 'origins.1'],
      [Array.from({ length: 21 }, (_, i) => `https://site${i}.example`), 'origins'],
      [Array.from({ length: 100_000 }, (_, i) => `https://site${i}.example`), 'origins'],
      [[5], 'origins.0'],
      [[{ origin: 'https://ok.example' }], 'origins.0'],
      ['https://ok.example', 'origins'],
      [null, 'origins'],
    ];
    for (const [origins, field] of cases) {
      const res = await putOrigins(origins);
      const shown = JSON.stringify(origins).slice(0, 80);
      expect([shown, res.status, res.body.code, res.body.relatedInfo?.field]).toEqual([shown, 400, 'ERR_VALID_001', field]);
    }
    expect((await app.request('GET', `/api/teams/${projectId}/embed-origins`, { token: user.accessToken })).body).toEqual({ origins: [] });

    // What is allowed: origins as browsers write them, IPv6 and ports included, up to 20.
    const allowed = ['https://app.customer.example', 'http://localhost:8080', 'https://[::1]:8443', ...Array.from({ length: 17 }, (_, i) => `https://site${i}.example`)];
    expect((await putOrigins(allowed)).body).toEqual({ origins: allowed });
    // Only an admin sets the list; another user's session is not a member at all.
    const stranger = await signUp(app);
    expect((await app.request('PUT', `/api/teams/${projectId}/embed-origins`, { token: stranger.accessToken, body: { origins: [] } })).body.code).toBe('ERR_TEAM_001');
  });

  it('bounds the token: its lifetime, mode and origin; a key needs embed_designer', async () => {
    await putOrigins(['https://app.customer.example', 'https://other.customer.example']);
    const mint = (body: unknown, token = user.accessToken) => app.request('POST', `/api/templates/${templateId}/embed-tokens`, { token, body });
    const cases: Array<[unknown, number, string, string?]> = [
      [{ mode: 'edit', ttlSeconds: 59, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: 86_401, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: 0, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: -60, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: 60.5, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: '3600', origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: 1e308, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'edit', ttlSeconds: null, origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'ttlSeconds'],
      [{ mode: 'admin', origin: 'https://app.customer.example' }, 400, 'ERR_VALID_001', 'mode'],
      // A missing required field is ERR_VALID_005 (docs/errors.md "Validation errors").
      [{ origin: 'https://app.customer.example' }, 400, 'ERR_VALID_005', 'mode'],
      [{ mode: 'edit', origin: 'https://*.customer.example' }, 400, 'ERR_VALID_001', 'origin'],
      [{ mode: 'edit', origin: 'https://app.customer.example/' }, 400, 'ERR_VALID_001', 'origin'],
      [{ mode: 'edit', origin: 'https://evil.example' }, 409, 'ERR_EMBED_004', 'origin'],
      // Two origins on the list: which one must be said.
      [{ mode: 'edit' }, 409, 'ERR_EMBED_004', 'origin'],
      [{ mode: 'edit', origin: 'https://app.customer.example', templateId: 'another' }, 400, 'ERR_VALID_001', 'templateId'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await mint(body);
      expect([body, res.status, res.body.code, res.body.relatedInfo?.field]).toEqual([body, status, code, field]);
    }
    const [{ count }] = await app.services.db.query(`SELECT count(*)::int AS count FROM embed_tokens`);
    expect(count).toBe(0);

    // The bounds themselves are accepted.
    for (const ttlSeconds of [60, 86_400]) {
      const res = await mint({ mode: 'view', ttlSeconds, origin: 'https://other.customer.example' });
      expect(res.status).toBe(201);
      expect(Math.round((Date.parse(res.body.expiresAt) - Date.now()) / 1000 / 60)).toBe(ttlSeconds / 60);
    }
    // A key without the flag is refused; with it, it mints.
    const plain = await createKey(app, user.accessToken);
    const res = await mint({ mode: 'edit', origin: 'https://app.customer.example' }, plain.plainKey);
    expect([res.status, res.body.code, res.body.relatedInfo?.required]).toEqual([403, 'ERR_AUTH_005', 'embed_designer']);
    const flagged = await createKey(app, user.accessToken, { name: 'embedding', permissions: { embed_designer: true } });
    expect((await mint({ mode: 'edit', origin: 'https://app.customer.example' }, flagged.plainKey)).status).toBe(201);

    // A made-up or overlong token never frames the page, nor reaches the API.
    for (const token of ['fmed_', `fmed_${'A'.repeat(5000)}`, 'fmed_../../etc', 'fmed_%0d%0aX-Frame-Options:%20ALLOW']) {
      const page = await fetch(`${app.url}/embed/designer/${templateId}?token=${token}`, { headers: { accept: 'text/html' } });
      if (page.status === 200) expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const call = await app.request('GET', `/api/templates/${templateId}`, { token });
      expect([token.slice(0, 20), call.status]).toEqual([token.slice(0, 20), 401]);
    }
  });
});
