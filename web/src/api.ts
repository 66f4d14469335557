import { createFormworkClient, type components, type paths } from '@formwork/client';

/**
 * The app's only way to the service: the typed client over the public REST API (clients/ts), on
 * this page's own origin. The access token lives in this module's memory and nowhere else; the
 * refresh token is an HttpOnly cookie the page never sees (docs/web.md, "Sessions").
 */
export const api = createFormworkClient(window.location.origin);

export type User = paths['/api/auth/login']['post']['responses'][200]['content']['application/json']['user'];
export type Job = components['schemas']['DocumentJob'];
export type ApiError = components['schemas']['Error'];

/** Asks the auth routes to keep the refresh token in the cookie (api/identity/browser-session.ts). */
export const COOKIE_SESSION = { 'X-Formwork-Session': 'cookie' } as const;

let accessToken: string | undefined;
let teamId: string | undefined;

export function setAccessToken(token: string | undefined): void {
  accessToken = token;
}

/** The project the app acts on: sent as X-Team-Id with every call. */
export function setTeamId(id: string | undefined): void {
  teamId = id;
}

api.use({
  onRequest({ request }) {
    if (accessToken) request.headers.set('Authorization', `Bearer ${accessToken}`);
    if (teamId) request.headers.set('X-Team-Id', teamId);
    return request;
  },
});

/** The message of an error body for a person, with its code. */
export function errorText(error: unknown): string {
  const body = error as Partial<ApiError> | undefined;
  if (body && typeof body.message === 'string') return body.code ? `${body.message} (${body.code})` : body.message;
  return 'Something went wrong; please try again.';
}

/** The data of a typed call, or a thrown Error with the API's message (for TanStack Query). */
export async function must<T>(call: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const { data, error } = await call;
  if (error !== undefined || data === undefined) throw new Error(errorText(error));
  return data;
}

/** For a call whose answer has no body (204): throws an Error with the API's message when it failed. */
export async function mustSucceed(call: Promise<{ error?: unknown; response: Response }>): Promise<void> {
  const { error, response } = await call;
  if (error !== undefined || !response.ok) throw new Error(errorText(error));
}
