import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { approvalMail, approverEmail, magicToken, manualGate, submit } from '../../support/approvals';
import { startTestApp, type TestApp, type TestResponse } from '../../support/app';
import { flowWorkspace } from '../../support/flow';

/**
 * The review API's answers against the schemas the OpenAPI document gives them
 * (api/flow/review.openapi-schemas.ts), as tests/integration/openapi/responses.test.ts does for the
 * resources: the reviewer's page is typed from them, so a presenter change the document misses fails here.
 */
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: { schemas: Record<string, unknown> } };

describe('the review API answers as documented', () => {
  let app: TestApp;
  let validatorOf: (method: string, path: string, status: number) => (body: unknown) => { valid: boolean; errors: unknown };
  beforeAll(async () => {
    app = await startTestApp();
    const doc = JSON.parse(JSON.stringify((await app.request<Doc>('GET', '/api/openapi.json')).body).replaceAll('"#/components/schemas/', '"doc#/$defs/')) as Doc;
    const ajv = addFormats(new Ajv2020({ strict: false }));
    ajv.addSchema({ $id: 'doc', $defs: doc.components.schemas });
    validatorOf = (method, path, status) => {
      const schema = doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
      if (!schema) throw new Error(`no JSON answer documented for ${method} ${path} ${status}`);
      const validate = ajv.compile(schema as object);
      return (body) => ({ valid: validate(body), errors: validate.errors ?? null });
    };
  });
  afterAll(() => app?.close());

  const expectDocumented = (res: TestResponse, method: string, path: string, status = 200) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: res.body });
    expect(validatorOf(method, path, status)(res.body)).toEqual({ valid: true, errors: null });
  };

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
