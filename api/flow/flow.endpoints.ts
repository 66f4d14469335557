import { html, listOf, noContent, ok, pageOf, redirect } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { routeTable } from '../openapi/route';
import * as approvals from './approvals.schema';
import * as gates from './gates.schema';
import * as runs from './runs.schema';
import * as review from './review.openapi-schemas';
import * as reviewSchemas from './review.schema';

/**
 * The Flow routes' declarations (docs/architecture.md "One declaration per route"): gates,
 * submissions, runs, deliveries, approvals and the reviewer's API and pages, mounted by
 * api/flow/*.routes.ts (analytics: analytics.endpoints.ts). Apart from the handlers, so that the
 * OpenAPI document is built without loading the services. Reads take any API key of the project, a run's
 * payload needs `read_runs`, gate configuration needs `manage_gates`.
 */
const gateId = { id: 'The gate id, short id or slug' };
const decided = { type: 'object', required: ['success', 'decision'], properties: { success: { type: 'boolean' }, decision: { type: 'string', enum: ['approved', 'rejected'] } }, additionalProperties: false };

const gateRoute = routeTable('Flow gates');

export const gateEndpoints = {
  create: gateRoute('post', '/api/flow/gates', 'Create a gate', { security: 'project', idempotent: true, request: { body: gates.createGateSchema }, responses: { 201: ok('The gate', resource('Gate')) } }),
  list: gateRoute('get', '/api/flow/gates', 'List gates', { security: 'project', request: { query: gates.listGatesSchema }, responses: { 200: ok('A page of gates', pageOf(resource('Gate'))) } }),
  get: gateRoute('get', '/api/flow/gates/:id', 'Get a gate', { security: 'project', request: { params: gateId }, responses: { 200: ok('The gate', resource('Gate')) } }),
  update: gateRoute('put', '/api/flow/gates/:id', 'Update a gate', { security: 'project', request: { params: gateId, body: gates.updateGateSchema }, responses: { 200: ok('The gate', resource('Gate')) } }),
  delete: gateRoute('delete', '/api/flow/gates/:id', 'Delete a gate', { security: 'project', request: { params: gateId }, responses: { 204: noContent } }),
  putSchema: gateRoute('put', '/api/flow/gates/:id/schema', 'Replace the gate\'s payload schema (a new version)', { security: 'project', request: { params: gateId, body: gates.putSchemaSchema }, responses: { 200: ok('The gate', resource('Gate')) } }),
  importSchema: gateRoute('post', '/api/flow/gates/:id/import-schema', 'Take the payload schema from a template\'s variables', { security: 'project', request: { params: gateId, body: gates.importSchemaSchema }, responses: { 200: ok('The gate', resource('Gate')) } }),
  versions: gateRoute('get', '/api/flow/gates/:id/versions', 'Schema versions of a gate', { security: 'project', request: { params: gateId }, responses: { 200: ok('Every version, oldest first', listOf(resource('GateSchemaVersion'))) } }),
  test: gateRoute('post', '/api/flow/gates/:id/test', 'Check a payload against the gate without recording anything', {
    security: 'project',
    request: { params: gateId, bodyDescription: 'The payload itself: a JSON object (variables mode) or text (freetext mode), at most 1 MB' },
    responses: { 200: ok('What the gate would say: the verdict, each layer and each step with its errors', resource('GateTestResult')) },
  }),
  validate: gateRoute('post', '/api/flow/gates/:id/validate', 'Submit a payload as a run and answer with the verdict', {
    security: 'project',
    idempotent: true,
    request: { params: gateId, bodyDescription: 'The payload itself: a JSON object (variables mode) or text (freetext mode), at most 1 MB' },
    responses: { 200: ok('Valid: the run', resource('FlowValidated')), 422: ok('Invalid: the run with what to fix', resource('FlowValidationFailed')) },
  }),
  submitRun: gateRoute('post', '/api/flow/gates/:gateId/runs', 'Submit a run', {
    description: 'Records a run (`source: "rest"`); a valid payload goes on to render, approval and delivery as the gate says.',
    security: 'project',
    idempotent: true,
    request: { params: { gateId: 'The gate id, short id or slug' }, body: runs.submitRunSchema, example: { payload: { customer: 'Ada', amount: 42 }, metadata: { orderId: 'A-17' } } },
    // Any problem with `payload` (missing or of no accepted kind) is the spec's ERR_VALID_005.
    codes: { payload: 'ERR_VALID_005' },
    responses: { 201: { ...ok('The run', resource('FlowRun')), headers: { Location: 'The run\'s URL' } } },
  }),
};

const runRoute = routeTable('Flow runs');

export const runEndpoints = {
  list: runRoute('get', '/api/flow/runs', 'List runs', { security: 'project', request: { query: runs.listRunsSchema }, responses: { 200: ok('A page of runs', pageOf(resource('FlowRunSummary'))) } }),
  listOfGate: runRoute('get', '/api/flow/gates/:gateId/runs', 'List the runs of a gate', { security: 'project', request: { params: { gateId: 'The gate id, short id or slug' }, query: runs.listRunsSchema }, responses: { 200: ok('A page of runs', pageOf(resource('FlowRunSummary'))) } }),
  get: runRoute('get', '/api/flow/runs/:id', 'Get a run', {
    description: 'The full record, input payload included: an API key needs `read_runs` (403 `ERR_AUTH_005` without); a JWT needs the viewer role.',
    security: 'project',
    request: { params: { id: 'The run id' } },
    responses: { 200: ok('The run', resource('FlowRun')) },
  }),
  deliveries: runRoute('get', '/api/flow/runs/:id/deliveries', 'Deliveries of a run', {
    description: 'Each delivery\'s `payload` (the body sent, with the run\'s input payload) is left out for an API key without `read_runs`.',
    security: 'project',
    request: { params: { id: 'The run id' } },
    responses: { 200: ok('The deliveries, oldest first, each with its attempts', listOf(resource('FlowDelivery'))) },
  }),
  retryDelivery: runRoute('post', '/api/flow/deliveries/:id/retry', 'Deliver again', {
    description: 'A failed delivery is sent again with a full new schedule; 409 `FLOW.DELIVERY_ALREADY_COMPLETED` when it was delivered, `ERR_WEBHOOK_005` while it is still on its way.',
    security: 'project',
    request: { params: { id: 'The delivery id' } },
    responses: { 200: ok('Re-enqueued', { type: 'object', required: ['success', 'deliveryId', 'message'], properties: { success: { type: 'boolean' }, deliveryId: { type: 'string', format: 'uuid' }, message: { type: 'string' } }, additionalProperties: false }) },
  }),
  approvals: runRoute('get', '/api/flow/runs/:id/approvals', 'Approvals of a run', {
    description: 'Every approver asked, with what each decided, when and their comment; oldest first. Any reader of the project.',
    security: 'project',
    request: { params: { id: 'The run id or short id' } },
    responses: { 200: ok('The run\'s approvals', listOf(resource('FlowApproval'))) },
  }),
  artefact: runRoute('get', '/api/flow/runs/:id/artefact', 'The run\'s document itself', {
    description: 'The rendered artefact (PDF or Excel workbook) from this origin whatever the storage; an API key needs `read_runs`. None (not rendered, or removed after the plan\'s retention): 404 `ERR_FILE_001`.',
    security: 'project',
    request: { params: { id: 'The run id or short id' } },
    responses: { 200: { description: 'The document, with its media type', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  }),
};

const approvalRoute = routeTable('Flow approvals');

export const approvalEndpoints = {
  list: approvalRoute('get', '/api/flow/approvals', 'Approvals waiting in the project', {
    description: 'The approvals of the caller (the signed-in user, or the creator of the API key): pending ones, oldest first; with `status=decided`, those approved, rejected or expired, latest first.',
    security: 'project',
    request: { query: approvals.myApprovalsSchema },
    responses: { 200: ok('A page of approvals', pageOf(resource('FlowApproval'))) },
  }),
  resend: approvalRoute('post', '/api/flow/approvals/resend/:runId', 'Email the reviewers of a run again', {
    security: 'project',
    request: { params: { runId: 'The run id' } },
    responses: {
      200: ok('Sent', {
        type: 'object',
        required: ['success', 'sentCount', 'totalApprovers'],
        properties: { success: { type: 'boolean' }, sentCount: { type: 'integer', description: 'Approvers e-mailed a fresh link' }, totalApprovers: { type: 'integer', description: 'Approvers of the run, decided or not' } },
        additionalProperties: false,
      }),
    },
  }),
  approve: approvalRoute('post', '/api/flow/approvals/:id/approve', 'Approve', { security: 'project', request: { params: { id: 'The approval id' }, body: approvals.decisionSchema }, responses: { 200: ok('The decision recorded', decided) } }),
  reject: approvalRoute('post', '/api/flow/approvals/:id/reject', 'Reject', { security: 'project', request: { params: { id: 'The approval id' }, body: approvals.decisionSchema }, responses: { 200: ok('The decision recorded', decided) } }),
};

const reviewRoute = routeTable('Flow review');

export const reviewEndpoints = {
  authenticate: reviewRoute('post', '/api/flow/review/authenticate', 'Exchange a magic link for a reviewer token', {
    description: 'A link opens one session: the exchange uses it up. With `X-Formwork-Session: cookie` (the reviewer\'s page) the review token goes into an HttpOnly cookie scoped to `/api/flow/review` and is left out of the body.',
    security: 'public',
    browserSession: true,
    request: { body: approvals.magicLinkSchema },
    responses: { 200: ok('The token', review.authenticated) },
  }),
  link: reviewRoute('post', '/api/flow/review/link', 'What became of a magic link (changes nothing)', { security: 'public', request: { body: reviewSchemas.linkStatusSchema }, responses: { 200: ok('The link\'s state', review.linkStatus) } }),
  signOut: reviewRoute('post', '/api/flow/review/sign-out', 'End the reviewer\'s cookie session', { security: 'public', browserSession: true, responses: { 204: noContent } }),
  resend: reviewRoute('post', '/api/flow/review/resend', 'Email a fresh magic link', { description: 'From the newest link, a used one or one a newer link replaced, while the approval waits.', security: 'public', request: { body: approvals.magicLinkSchema }, responses: { 200: ok('Sent', review.sent) } }),
  inbox: reviewRoute('get', '/api/flow/review/inbox', 'Approvals waiting for this reviewer', { security: 'review', browserSession: true, request: { query: approvals.listApprovalsSchema }, responses: { 200: ok('A page of approvals', pageOf(review.approval)) } }),
  approval: reviewRoute('get', '/api/flow/review/approvals/:id', 'An approval with its payload, schema and document', { security: 'review', browserSession: true, request: { params: { id: 'The approval id' } }, responses: { 200: ok('The approval', review.detail) } }),
  document: reviewRoute('get', '/api/flow/review/approvals/:id/document', 'The run\'s rendered document (its bytes)', { security: 'review', browserSession: true, request: { params: { id: 'The approval id' } }, responses: { 200: { description: 'The document', contentType: 'application/pdf', schema: { type: 'string', format: 'binary' } } } }),
  approve: reviewRoute('post', '/api/flow/review/approvals/:id/approve', 'Approve as the reviewer', { security: 'review', browserSession: true, request: { params: { id: 'The approval id' }, body: approvals.decisionSchema }, responses: { 200: ok('The decision', review.decided) } }),
  reject: reviewRoute('post', '/api/flow/review/approvals/:id/reject', 'Reject as the reviewer', { security: 'review', browserSession: true, request: { params: { id: 'The approval id' }, body: approvals.decisionSchema }, responses: { 200: ok('The decision', review.decided) } }),
};

/** The reviewer's pages (review-page.routes.ts): HTML and form posts, without Joi-validated bodies. */
export const reviewPageEndpoints = {
  page: reviewRoute('get', '/review', 'The magic link: the reviewer\'s page (HTML)', { description: 'The dashboard\'s page when it is built, whose `<noscript>` links to `/no-script/review`; else that page itself. Opening it changes nothing.', security: 'public', responses: { 200: html('The page') } }),
  noScriptPage: reviewRoute('get', '/no-script/review', 'Reviewer sign-in page without script (HTML)', { security: 'public', responses: { 200: html('The page') } }),
  signIn: reviewRoute('post', '/review', 'Sign in from the review page (form post)', { security: 'public', request: { bodyType: 'form', bodyDescription: '`token` and `email` of the magic link' }, responses: { 303: redirect('To the reviewer\'s inbox'), 200: html('The page with what went wrong') } }),
  resend: reviewRoute('post', '/review/resend', 'Ask for a fresh magic link from the review page', { security: 'public', request: { bodyType: 'form', bodyDescription: '`token` and `email`' }, responses: { 200: html('The page') } }),
  approval: reviewRoute('get', '/review/approvals/:id', 'An approval\'s review page (HTML)', { security: 'public', request: { params: { id: 'The approval id' } }, responses: { 200: html('The page') } }),
  decision: reviewRoute('post', '/review/approvals/:id/decision', 'Approve or reject from the review page (form post)', { security: 'public', request: { params: { id: 'The approval id' }, bodyType: 'form', bodyDescription: 'The decision and an optional comment' }, responses: { 303: redirect('Back to the inbox'), 200: html('The page with what went wrong') } }),
};
