import { randomUUID } from 'node:crypto';
import { addCredits } from '../../../db/documents/billing';
import { startTestApp, type TestApp } from '../../support/app';
import { download } from '../../support/documents';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { squeezedText } from '../../support/rendering-pdf';
import { createTemplate, publish } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * A gate's `renderConfig.output` and the quota rule for Flow-rendered documents (docs/documents.md
 * "Quotas and the watermark on every output", docs/flow.md "Rendering"): the output object is
 * checked when the gate is saved; a natively rendered run is one of the project's documents, a free
 * one (watermarked) or, with `renderConfig.useCredit`, a credit (not watermarked); past the quota
 * the submission is refused and nothing is recorded; a run that ends without its document gets it back.
 */

const FINAL = ['completed', 'failed', 'rejected', 'expired'];
const FREE = 3;

describe('Flow: output options and quotas of natively rendered runs', () => {
  let app: TestApp;
  let templateId: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { FREE_DOCUMENTS_PER_MONTH: String(FREE) } });
  });
  afterAll(() => app.close());

  /** A workspace with its own quota and a published letter template (`customer` required). */
  async function workspace(): Promise<FlowWorkspace> {
    const ws = await flowWorkspace(app, 'growth');
    const template = await createTemplate(app, ws.user.accessToken);
    await publish(app, ws.user.accessToken, template.id);
    templateId = template.id;
    return ws;
  }

  const submit = (ws: FlowWorkspace, gateId: string, payload: unknown, path: 'runs' | 'validate' = 'runs') =>
    app.request('POST', path === 'runs' ? `/api/flow/gates/${gateId}/runs` : `/api/flow/gates/${gateId}/validate`, { token: ws.key, body: path === 'runs' ? { payload } : payload });
  const finalRun = (ws: FlowWorkspace, runId: string) =>
    waitFor(
      async () => {
        const run = (await app.request('GET', `/api/flow/runs/${runId}`, { token: ws.key })).body;
        return FINAL.includes(run.status) ? run : undefined;
      },
      { timeoutMs: 60_000, what: `run ${runId} to finish` },
    );
  const quota = async (ws: FlowWorkspace) => (await app.request('GET', '/api/documents/quota', { token: ws.key })).body;
  const runCount = async (ws: FlowWorkspace) => (await app.services.db.query(`SELECT count(*)::int AS n FROM flow_runs WHERE project_id = $1`, [ws.projectId]))[0].n;

  describe('renderConfig.output is checked when the gate is saved', () => {
    let ws: FlowWorkspace;
    beforeAll(async () => {
      ws = await workspace();
    });

    const create = (renderConfig: Record<string, unknown>, renderMode = 'native') =>
      app.request('POST', '/api/flow/gates', { token: ws.key, body: { name: `Output ${randomUUID().slice(0, 8)}`, renderMode, renderTemplateId: templateId, renderConfig } });

    it.each([
      ['an unknown PDF/A level', { output: { pdfa: '9z' } }, 'renderConfig.output.pdfa'],
      ['attachments with PDF/A-2', { output: { pdfa: '2b', attachments: [{ filename: 'a.txt', content: 'aGk=' }] } }, 'renderConfig.output.attachments'],
      ['facturx without pdfa', { output: { facturx: { profile: 'EN16931' } } }, 'renderConfig.output.facturx'],
      ['an image on a PDF gate', { output: { image: { dpi: 100 } } }, 'renderConfig.output.image'],
      ['a batch archive', { output: { archive: 'zip' } }, 'renderConfig.output.archive'],
      ['PDF options on an Excel gate', { format: 'excel', output: { pdfa: '3b' } }, 'renderConfig.output.pdfa'],
      ['encryption (a gate keeps no passwords)', { output: { encryption: { ownerPassword: 'owner' } } }, 'renderConfig.output.encryption'],
      ['a non-boolean useCredit', { useCredit: 'yes' }, 'renderConfig.useCredit'],
      ['six attachments', { output: { pdfa: '3b', attachments: Array.from({ length: 6 }, (_, i) => ({ filename: `f${i}.txt`, content: 'aGk=' })) } }, 'renderConfig.output.attachments'],
      ['an attachment named with a path', { output: { pdfa: '3b', attachments: [{ filename: '../etc/passwd', content: 'aGk=' }] } }, 'renderConfig.output.attachments.0.filename'],
    ])('refuses %s: 400 ERR_VALID_001 naming the field', async (_what, renderConfig, field) => {
      const res = await create(renderConfig);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field } });
    });

    it('refuses output on a custom render API gate, and on an update as on a create', async () => {
      const custom = await app.request('POST', '/api/flow/gates', {
        token: ws.key,
        body: { name: 'Custom with output', renderMode: 'custom_api', renderConfig: { url: 'https://render.example/doc', output: { pdfa: '3b' } } },
      });
      expect(custom.status).toBe(400);
      expect(custom.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'renderConfig.output' } });

      const gate = await createGate(app, ws.key, { name: 'Output later', renderMode: 'native', renderTemplateId: templateId });
      const bad = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { renderConfig: { output: { pdfa: '2u', facturx: {} } } } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'renderConfig.output.facturx' } });
    });

    it('keeps a valid output with its defaults and answers it back', async () => {
      const gate = await createGate(app, ws.key, {
        name: 'Archived invoices',
        renderMode: 'native',
        renderTemplateId: templateId,
        renderConfig: { format: 'pdf', useCredit: false, output: { pdfa: '3b', signature: { certificateId: randomUUID(), reason: 'Issued' } } },
      });
      expect(gate.renderConfig).toMatchObject({ format: 'pdf', useCredit: false, output: { pdfa: '3b', signature: { reason: 'Issued', visible: false } } });
      const read = await app.request('GET', `/api/flow/gates/${gate.id}`, { token: ws.key });
      expect(read.body.renderConfig.output.pdfa).toBe('3b');
    });
  });

  it('the output reaches the render: a signature with a certificate the project does not have fails the run, and its free document comes back', async () => {
    const ws = await workspace();
    const gate = await createGate(app, ws.key, {
      name: 'Signed letters',
      renderMode: 'native',
      renderTemplateId: templateId,
      renderConfig: { output: { signature: { certificateId: randomUUID() } } },
    });
    const res = await submit(ws, gate.id, { customer: 'Signed Sam' });
    expect(res.status).toBe(201);
    // Charged when accepted…
    expect((await quota(ws)).freeDocuments.used).toBe(1);
    const run = await finalRun(ws, res.body.id);
    expect(run).toMatchObject({ status: 'failed', artefactUrl: null });
    expect(run.error).toMatch(/certificate/i);
    // …and given back when the run ends without its document.
    expect((await quota(ws)).freeDocuments).toEqual({ limit: FREE, used: 0, remaining: FREE });
  });

  it('counts each rendered run as a free document with the watermark, refuses past the quota (429, nothing recorded), and gives back a failed render', async () => {
    const ws = await workspace();
    const gate = await createGate(app, ws.key, { name: 'Free letters', renderMode: 'native', renderTemplateId: templateId, renderConfig: { format: 'pdf' } });

    const first = await submit(ws, gate.id, { customer: 'Watermarked Wendy' });
    expect(first.status).toBe(201);
    const run = await finalRun(ws, first.body.id);
    expect(run.status).toBe('completed');
    const text = await squeezedText((await download(run.artefactUrl)).body);
    expect(text).toContain('DearWatermarkedWendy');
    expect(text).toContain('FORMWORKFREE');
    expect((await quota(ws)).freeDocuments).toEqual({ limit: FREE, used: 1, remaining: FREE - 1 });

    // A render that fails (the template's required `customer` is missing) gives its document back.
    const broken = await submit(ws, gate.id, { someone: 'else' });
    expect(broken.status).toBe(201);
    expect((await finalRun(ws, broken.body.id)).status).toBe('failed');
    expect((await quota(ws)).freeDocuments.used).toBe(1);

    // /validate records a run too: it spends the second and third.
    expect((await submit(ws, gate.id, { customer: 'Second' }, 'validate')).status).toBe(200);
    expect((await submit(ws, gate.id, { customer: 'Third' })).status).toBe(201);
    expect((await quota(ws)).freeDocuments.remaining).toBe(0);

    const before = await runCount(ws);
    for (const path of ['runs', 'validate'] as const) {
      const refused = await submit(ws, gate.id, { customer: 'Fourth' }, path);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'ERR_QUOTA_008', relatedInfo: { limit: FREE, used: FREE, requested: 1 } });
    }
    expect(await runCount(ws)).toBe(before);

    // An invalid payload never renders: answered as before, nothing charged.
    const schemaGate = await createGate(app, ws.key, {
      name: 'Checked letters',
      renderMode: 'native',
      renderTemplateId: templateId,
      schema: { type: 'object', properties: { customer: { type: 'string', required: true } } },
    });
    const invalid = await submit(ws, schemaGate.id, { nobody: true });
    expect(invalid.status).toBe(201);
    expect(invalid.body.status).toBe('validation_failed');
    // A gate that does not render natively is not charged either.
    const plain = await createGate(app, ws.key, { name: 'No render' });
    expect((await submit(ws, plain.id, { customer: 'Unrendered' })).status).toBe(201);
  });

  it('never spends more free documents than the quota under concurrent submissions', async () => {
    const ws = await workspace();
    const gate = await createGate(app, ws.key, { name: 'Busy letters', renderMode: 'native', renderTemplateId: templateId });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => submit(ws, gate.id, { customer: `Rush ${i}` })));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429, 429]);
    expect(await runCount(ws)).toBe(FREE);
    expect((await quota(ws)).freeDocuments).toEqual({ limit: FREE, used: FREE, remaining: 0 });
  });

  it('with renderConfig.useCredit: refuses without credits (429 ERR_QUOTA_011), spends one credit per run, no watermark, free quota untouched', async () => {
    const ws = await workspace();
    const gate = await createGate(app, ws.key, { name: 'Paid letters', renderMode: 'native', renderTemplateId: templateId, renderConfig: { useCredit: true } });
    const none = await submit(ws, gate.id, { customer: 'Nobody' });
    expect(none.status).toBe(429);
    expect(none.body).toMatchObject({ code: 'ERR_QUOTA_011', relatedInfo: { required: 1, balance: 0 } });

    await addCredits(app.services.db, ws.projectId, 2, 'test pack');
    const paid = await submit(ws, gate.id, { customer: 'Paying Paula' });
    expect(paid.status).toBe(201);
    const run = await finalRun(ws, paid.body.id);
    expect(run.status).toBe('completed');
    const text = await squeezedText((await download(run.artefactUrl)).body);
    expect(text).toContain('DearPayingPaula');
    expect(text).not.toContain('FORMWORKFREE');
    expect(await quota(ws)).toMatchObject({ freeDocuments: { used: 0 }, credits: { balance: 1 } });
    const ledger = await app.services.db.query(`SELECT delta, reason FROM credit_ledger WHERE project_id = $1 ORDER BY created_at`, [ws.projectId]);
    expect(ledger).toEqual([
      { delta: 2, reason: 'test pack' },
      { delta: -1, reason: `flow run ${run.shortId}` },
    ]);
  });
});
