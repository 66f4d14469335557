import { createFormworkClient, type components, type paths } from '@formwork/client';

/**
 * The reviewer's calls (docs/web.md "The reviewer's page"): the same typed client, on this origin,
 * but its own: no account's access token (a signed-in person reviewing in the same browser must not
 * send their JWT, which the review API refuses) and `X-Formwork-Session: cookie` on every call, so the
 * review token stays in its HttpOnly cookie and the page's script never holds it.
 */
export const reviewApi = createFormworkClient(window.location.origin, undefined, { 'X-Formwork-Session': 'cookie' });

type Json<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;

export type ReviewDetail = Json<'/api/flow/review/approvals/{id}', 'get'>;
export type ReviewApproval = Json<'/api/flow/review/inbox', 'get'>['data'][number];
export type LinkStatus = Json<'/api/flow/review/link', 'post'>;
export type ApiError = components['schemas']['Error'];
