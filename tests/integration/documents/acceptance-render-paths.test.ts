import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, type DocumentProject } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { createTestDatasource } from '../../support/reporting';
import { buildTemplate, createTemplate, publish } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * The checks at acceptance on every render path (docs/documents.md "Checks at acceptance"): a
 * generation refuses at once; a Flow run that renders natively and a report run fail before their
 * render starts, with the same catalogued code on the run (not a late Chromium error). An image
 * component fed by a variable the template does not declare as an image is checked as well.
 */
describe('checks at acceptance on every render path', () => {
  const LOOP_LIMIT = 3;
  const STRING_LIMIT = 40;
  let app: TestApp;
  let docs: DocumentProject;
  let ws: FlowWorkspace;
  let alice: SignedUpUser;
  let flowTemplateId: string;

  /** The test letter with an image component whose `src` is `{{pic}}`, a variable it does not declare. */
  const letter = () => {
    const base = buildTemplate();
    const schema = base.schema as { sections: Array<{ components: unknown[] }> };
    schema.sections[0].components.push({ id: 'pic', type: 'image', props: { src: '{{pic}}', alt: 'Picture' } });
    return { ...base, schema };
  };
  const items = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `l${i}`, amount: i }));
  const FOREIGN_IMAGE = 'https://images.example.org/p.png';

  beforeAll(async () => {
    app = await startTestApp({
      env: { LOOP_MAX_ITERATIONS: String(LOOP_LIMIT), DOCUMENT_VARIABLE_MAX_CHARS: String(STRING_LIMIT), OUTBOUND_ALLOWLIST: '127.0.0.1', FREE_DOCUMENTS_PER_MONTH: '100' },
    });
    docs = await setupDocumentProject(app, letter());
    ws = await flowWorkspace(app);
    const t = await createTemplate(app, ws.user.accessToken, letter());
    await publish(app, ws.user.accessToken, t.id);
    flowTemplateId = t.id;
    alice = await signUp(app, { verified: true });
  });
  afterAll(() => app?.close());

  it('refuses a generation whose undeclared image variable is on a host outside IMAGE_HOST_ALLOWLIST', async () => {
    const res = await app.request('POST', '/api/documents/generate', { token: docs.apiKey, body: { templateId: docs.templateId, format: 'pdf', variables: { customer: 'Ann', pic: FOREIGN_IMAGE } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_OUTBOUND_001', relatedInfo: { field: 'pic', host: 'images.example.org', setting: 'IMAGE_HOST_ALLOWLIST' } });
  });

  describe('a Flow run that renders natively', () => {
    let gateId: string;
    beforeAll(async () => {
      gateId = (await createGate(app, ws.key, { name: `Letters ${randomBytes(3).toString('hex')}`, renderMode: 'native', renderTemplateId: flowTemplateId, renderConfig: { format: 'pdf' } })).id;
    });

    const finalRun = async (payload: unknown) => {
      const res = await app.request('POST', `/api/flow/gates/${gateId}/runs`, { token: ws.key, body: { payload } });
      expect(res.status).toBe(201);
      return waitFor(
        async () => {
          const run = (await app.request('GET', `/api/flow/runs/${res.body.runId}`, { token: ws.key })).body;
          return ['completed', 'failed'].includes(run.status) ? run : undefined;
        },
        { timeoutMs: 60_000, what: 'the run to end' },
      );
    };

    it.each([
      ['more rows than the loop limit', { customer: 'Ann', items: items(LOOP_LIMIT + 2) }, 'ERR_LIMIT_007', `'inputPayload.items' has ${LOOP_LIMIT + 2} elements`],
      ['a string past DOCUMENT_VARIABLE_MAX_CHARS', { customer: 'x'.repeat(STRING_LIMIT + 1) }, 'ERR_LIMIT_017', `'inputPayload.customer' is ${STRING_LIMIT + 1} characters`],
      ['an image on a host not allowed', { customer: 'Ann', pic: FOREIGN_IMAGE }, 'ERR_OUTBOUND_001', 'IMAGE_HOST_ALLOWLIST'],
    ])('fails with %s before the render, keeping the code on the run', async (_what, payload, code, words) => {
      const run = await finalRun(payload);
      expect(run).toMatchObject({ status: 'failed', errorCode: code, artefactUrl: null });
      expect(run.error).toMatch(/^Render failed: /);
      expect(run.error).toContain(words);
    });

    it('renders an accepted payload', async () => {
      expect(await finalRun({ customer: 'Ann', items: items(LOOP_LIMIT) })).toMatchObject({ status: 'completed', errorCode: null });
    });
  });

  it('fails a report run at render with the acceptance code when a dataset holds a string past the cap', async () => {
    const ds = await createTestDatasource(app, alice.accessToken, `Src ${randomBytes(3).toString('hex')}`);
    const template = await createTemplate(app, alice.accessToken, letter());
    await publish(app, alice.accessToken, template.id);
    const q = await app.request('POST', '/api/reporting/queries', {
      token: alice.accessToken,
      body: { name: `Long ${randomBytes(3).toString('hex')}`, datasourceId: ds.id, text: `SELECT repeat('x', ${STRING_LIMIT + 5}) AS label, 1 AS amount` },
    });
    expect(q.status).toBe(201);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, { token: alice.accessToken, body: {} })).status).toBe(201);
    const report = await app.request('POST', '/api/reporting/reports', {
      token: alice.accessToken,
      body: {
        name: `Long ${randomBytes(3).toString('hex')}`,
        templateId: template.id,
        datasets: [{ name: 'items', queryId: q.body.id }],
        parameters: [{ name: 'customer', type: 'string', default: 'ACME' }],
        outputs: [{ format: 'pdf' }],
      },
    });
    expect([report.status, report.body.relatedInfo ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/reports/${report.body.id}/publish`, { token: alice.accessToken, body: {} })).status).toBe(201);
    const started = await app.request('POST', `/api/reporting/reports/${report.body.id}/runs`, { token: alice.accessToken, body: {} });
    expect(started.status).toBe(201);
    const run = await waitFor(
      async () => {
        const res = await app.request('GET', `/api/reporting/runs/${started.body.runId}`, { token: alice.accessToken });
        return ['completed', 'failed'].includes(res.body.status) ? res.body : undefined;
      },
      { timeoutMs: 120_000, what: 'the report run to end' },
    );
    expect(run).toMatchObject({ status: 'failed', failedStage: 'render', error: { code: 'ERR_LIMIT_017', message: expect.stringContaining(`'items[0].label' is ${STRING_LIMIT + 5} characters`) } });
  });
});
