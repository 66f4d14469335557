import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { accessToken, basic, createOAuthClient, tokenByForm } from '../../support/oauth';
import { waitFor } from '../../support/wait';

/** OAuth client credentials against misuse (docs/oauth.md, "Security notes"), with a short token lifetime. */
describe('OAuth client credentials: hostile use', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { OAUTH_TOKEN_TTL_SECONDS: '2', LOG_LEVEL: 'debug' } });
    alice = await signUp(app, { verified: true });
  });
  afterAll(() => app.close());

  it('expires tokens after OAUTH_TOKEN_TTL_SECONDS: 401 ERR_OAUTH_007', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'short-lived', permissions: { read_documents: true } });
    const res = await tokenByForm(app, client);
    expect(res.body.expires_in).toBe(2);
    const token = res.body.access_token as string;
    const issuedAt = Date.now();
    expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
    const expired = await waitFor(
      async () => {
        const r = await app.request('GET', '/api/documents/jobs', { token });
        return r.status === 401 ? r : undefined;
      },
      { timeoutMs: 10_000, what: 'the token to expire' },
    );
    expect(Date.now() - issuedAt).toBeGreaterThanOrEqual(1000);
    expect(expired.body).toMatchObject({ code: 'ERR_OAUTH_007', message: expect.stringMatching(/expired/) });
    // A new token works again.
    expect((await app.request('GET', '/api/documents/jobs', { token: await accessToken(app, client) })).status).toBe(200);
  });

  it('limits guessing a secret: after 10 failures from one address even the right secret gets 429 slow_down', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'target' });
    const other = await createOAuthClient(app, alice.accessToken, { name: 'bystander' });
    for (let i = 0; i < 10; i++) {
      const res = await tokenByForm(app, { clientId: client.clientId, clientSecret: `fmocs_guess${i}` });
      expect(res.body.error).toBe('invalid_client');
    }
    const locked = await tokenByForm(app, client);
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ error: 'slow_down', code: 'ERR_OAUTH_008', retryAfter: expect.any(Number) });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.body).not.toHaveProperty('access_token');
    // Another client of the same address is not held back by the guesses against this one.
    expect((await tokenByForm(app, other)).status).toBe(200);
  });

  it('refuses a 1 MB token request body with 413 invalid_request, whatever its type', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'big bodies' });
    const padding = 'x'.repeat(1024 * 1024);
    const form = await app.request('POST', '/api/oauth/token', {
      rawBody: `grant_type=client_credentials&junk=${padding}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
    });
    expect(form.status).toBe(413);
    expect(form.body).toMatchObject({ error: 'invalid_request', code: 'ERR_REQ_002' });
    const json = await app.request('POST', '/api/oauth/token', { body: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, junk: padding } });
    expect(json.status).toBe(413);
    expect(json.body).toMatchObject({ error: 'invalid_request', code: 'ERR_REQ_002' });
    // Sent without a Content-Length (chunked), it is cut off the same way.
    const chunked = await fetch(`${app.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
      body: new Blob([`grant_type=client_credentials&junk=${padding}`]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await tokenByForm(app, client).then((r) => r.status)).toBe(200);
  });

  it('never writes a secret or token to the log, not even when a request fails inside', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'quiet', permissions: { read_documents: true } });
    const token = await accessToken(app, client);
    let printed = '';
    const capture = (chunk: string | Uint8Array) => {
      printed += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      return true;
    };
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
    let fresh = '';
    try {
      await tokenByForm(app, client);
      await tokenByForm(app, { clientId: client.clientId, clientSecret: client.clientSecret + 'x' });
      await app.request('GET', '/api/documents/jobs', { token });
      await app.request('GET', '/api/documents/jobs', { token: token + 'x' });
      // A token this process has not resolved yet: a working one it has is served from the credential cache.
      fresh = await accessToken(app, client);
      // With the tables gone, both requests fail unexpectedly (500) and the error is logged with its details.
      await app.services.db.query(`ALTER TABLE oauth_tokens RENAME TO oauth_tokens_away`);
      await app.services.db.query(`ALTER TABLE oauth_clients RENAME TO oauth_clients_away`);
      try {
        expect((await app.request('GET', '/api/documents/jobs', { token: fresh })).status).toBe(500);
        expect((await tokenByForm(app, client)).status).toBe(500);
      } finally {
        await app.services.db.query(`ALTER TABLE oauth_clients_away RENAME TO oauth_clients`);
        await app.services.db.query(`ALTER TABLE oauth_tokens_away RENAME TO oauth_tokens`);
      }
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(printed).toContain('request failed');
    expect(printed).toContain('oauth_');
    for (const credential of [client.clientSecret, token, fresh]) expect(printed).not.toContain(credential);
    expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
  });
});
