import { approvalMail, approverEmail, magicToken, manualGate, submit } from '../../support/approvals';
import { startTestApp, type TestApp } from '../../support/app';
import { flowWorkspace } from '../../support/flow';
import { documentedAnswers, type DocumentedAnswers } from '../../support/openapi-answers';

/**
 * The review API's answers against the schemas the OpenAPI document gives them
 * (api/flow/review.openapi-schemas.ts), as tests/integration/openapi/responses.test.ts does for the
 * resources: the reviewer's page is typed from them, so a presenter change the document misses fails here.
 */
describe('the review API answers as documented', () => {
  let app: TestApp;
  let validatorOf: DocumentedAnswers['validatorOf'];
  let expectDocumented: DocumentedAnswers['expectDocumented'];
  beforeAll(async () => {
    app = await startTestApp();
    ({ validatorOf, expectDocumented } = await documentedAnswers(app));
  });
  afterAll(() => app?.close());

  it('link, authenticate, inbox, detail, resend and the decision', async () => {
    const ws = await flowWorkspace(app, 'starter');
    const email = approverEmail();
    const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 120, onTimeout: 'reject' }, { schema: { type: 'object', properties: { customer: { type: 'string', title: 'Customer' }, amount: { type: 'number' } } } });
    await submit(app, ws, gate);
    const token = magicToken(await approvalMail(app, email));
    expectDocumented(await app.request('POST', '/api/flow/review/link', { body: { token } }), 'post', '/api/flow/review/link');
    expectDocumented(await app.request('POST', '/api/flow/review/link', { body: { token: 'unknown' } }), 'post', '/api/flow/review/link');
    const auth = await app.request('POST', '/api/flow/review/authenticate', { body: { token, email } });
    expectDocumented(auth, 'post', '/api/flow/review/authenticate');
    const reviewToken = auth.body.reviewToken as string;
    expectDocumented(await app.request('POST', '/api/flow/review/link', { body: { token } }), 'post', '/api/flow/review/link');
    const inbox = await app.request('GET', '/api/flow/review/inbox', { token: reviewToken });
    expectDocumented(inbox, 'get', '/api/flow/review/inbox');
    const detail = await app.request('GET', `/api/flow/review/approvals/${auth.body.approvalId}`, { token: reviewToken });
    expectDocumented(detail, 'get', '/api/flow/review/approvals/{id}');
    expect(detail.body.schema.properties.customer.title).toBe('Customer');
    expect(validatorOf('get', '/api/flow/review/approvals/{id}', 200)({ ...detail.body, undocumented: 1 }).valid).toBe(false);
    expectDocumented(await app.request('POST', '/api/flow/review/resend', { body: { token, email } }), 'post', '/api/flow/review/resend');
    const decided = await app.request('POST', `/api/flow/review/approvals/${auth.body.approvalId}/approve`, { token: reviewToken, body: { comment: 'fine' } });
    expectDocumented(decided, 'post', '/api/flow/review/approvals/{id}/approve');
    expectDocumented(await app.request('POST', '/api/flow/review/link', { body: { token } }), 'post', '/api/flow/review/link');
  });
});
