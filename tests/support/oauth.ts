import type { TestApp, TestResponse } from './app';

/** Creates an OAuth client through the API as `token` (in the project X-Team-Id names, if any); returns the body. */
export async function createOAuthClient(app: TestApp, token: string, body: Record<string, unknown>, teamId?: string): Promise<any> {
  const res = await app.request('POST', '/api/oauth/clients', { token, body, headers: teamId ? { 'X-Team-Id': teamId } : {} });
  if (res.status !== 201) throw new Error(`create OAuth client failed: ${res.status} ${res.text}`);
  return res.body;
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The RFC's own form: x-www-form-urlencoded parameters, the client authenticated with HTTP Basic. */
export function tokenByForm(app: Pick<TestApp, 'request'>, client: { clientId: string; clientSecret: string }, params: Record<string, string> = { grant_type: 'client_credentials' }): Promise<TestResponse> {
  return app.request('POST', '/api/oauth/token', {
    rawBody: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
  });
}

/** JSON parameters with client_id and client_secret in the body. */
export function tokenByJson(app: Pick<TestApp, 'request'>, client: { clientId: string; clientSecret: string }, params: Record<string, string> = {}): Promise<TestResponse> {
  return app.request('POST', '/api/oauth/token', { body: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, ...params } });
}

/** An access token for `client`, or the test fails with the answer. */
export async function accessToken(app: Pick<TestApp, 'request'>, client: { clientId: string; clientSecret: string }, scope?: string): Promise<string> {
  const res = await tokenByForm(app, client, { grant_type: 'client_credentials', ...(scope !== undefined ? { scope } : {}) });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}
