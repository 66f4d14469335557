import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../../scripts/free-port';
import { startMetricsServer, type MetricsServer } from '../../../platform/metrics';
import { startApiProcess, type ApiProcess } from '../../support/api-process';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { createGate, flowWorkspace } from '../../support/flow';
import { createTemplate, publish } from '../../support/templates';
import { spawnRenderWorker, type RenderWorkerProcess } from '../../support/render-worker';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { sample } from '../../support/metrics';

/** Every exposition scraped in this file: the dashboard test checks its series against them. */
const scraped: string[] = [];

const scrape = async (url: string, token?: string) => {
  const res = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  if (res.status === 200) scraped.push(text);
  return { status: res.status, text, type: res.headers.get('content-type') };
};

/**
 * Each role's Prometheus endpoint (docs/operations.md "Observing"): on METRICS_PORT, never on the
 * public port, behind METRICS_TOKEN when set; the service's own figures next to the Temporal SDK's.
 */
describe('Prometheus metrics', () => {
  describe('API role (its own process)', () => {
    let api: ApiProcess;
    let metricsUrl: string;
    const token = randomBytes(24).toString('hex');

    beforeAll(async () => {
      const port = await freePort();
      metricsUrl = `http://127.0.0.1:${port}/metrics`;
      api = await startApiProcess({ METRICS_PORT: String(port), METRICS_TOKEN: token });
    });
    afterAll(async () => {
      await api?.close();
    });

    it('serves /metrics on METRICS_PORT only, and only to the bearer of METRICS_TOKEN', async () => {
      expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
      const anonymous = await scrape(metricsUrl);
      expect(anonymous.status).toBe(401);
      expect(anonymous.text).not.toContain('formwork_');
      expect((await scrape(metricsUrl, token.slice(1))).status).toBe(401);
      expect((await scrape(metricsUrl, `${token}x`)).status).toBe(401);
      expect((await fetch(metricsUrl, { headers: { Authorization: token } })).status).toBe(401);
      expect((await scrape(metricsUrl.replace('/metrics', '/other'), token)).status).toBe(404);
      const ok = await scrape(metricsUrl, token);
      expect(ok.status).toBe(200);
      expect(ok.type).toContain('text/plain');
      expect(ok.text).toContain('formwork_process_cpu_seconds_total');
    });

    it('after a generate shows the queued job, the request by route template, and the task queue backlog; no tenant in any label', async () => {
      // This process runs no worker (no verification mail): the address is marked verified directly.
      const ws = await flowWorkspace(api.app);
      const template = await createTemplate(api.app, ws.user.accessToken);
      await publish(api.app, ws.user.accessToken, template.id);
      const generated = await api.app.request('POST', '/api/documents/generate', {
        token: ws.key,
        body: { templateId: template.id, format: 'pdf', variables: { customer: 'Metrics', items: [{ label: 'Consulting', amount: 1200 }] } },
      });
      expect(generated.status).toBe(201);
      const { jobId } = generated.body as { jobId: string };
      // A path a client made up counts as one `unmatched` series, whatever it is.
      const madeUp = `/api/no-such-thing-${randomBytes(6).toString('hex')}`;
      expect((await api.app.request('GET', madeUp)).status).toBe(404);
      expect((await api.app.request('GET', `/api/documents/jobs/${jobId}`, { token: ws.key })).status).toBe(200);

      const { text } = await scrape(metricsUrl, token);
      // No render worker polls here: the job waits, queued.
      expect(sample(text, 'formwork_document_jobs_open', { status: 'queued' })).toBe(1);
      expect(sample(text, 'formwork_document_jobs_open', { status: 'processing' })).toBe(0);
      expect(sample(text, 'formwork_http_request_duration_seconds_count', { method: 'POST', route: '/api/documents/generate', status: '201' })).toBe(1);
      expect(sample(text, 'formwork_http_request_duration_seconds_count', { method: 'GET', route: '/api/documents/jobs/:jobId', status: '200' })).toBe(1);
      expect(sample(text, 'formwork_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'formwork_task_queue_backlog', { queue: 'render', type: 'activity' })).toEqual(expect.any(Number));
      expect(sample(text, 'formwork_task_queue_backlog', { queue: 'main', type: 'workflow' })).toEqual(expect.any(Number));
      expect(sample(text, 'formwork_flow_circuit_breakers', { state: 'open' })).toBe(0);
      for (const tenantValue of [ws.projectId, template.id, jobId, ws.user.id, madeUp]) expect(text).not.toContain(tenantValue);
    });
  });

  describe('worker roles', () => {
    let app: TestApp;
    let docs: DocumentProject;
    let receiver: WebhookReceiver;
    let render: RenderWorkerProcess | undefined;
    let inProcess: MetricsServer | undefined;

    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      app = await startTestApp({ queues: ['main', 'egress'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } });
      docs = await setupDocumentProject(app);
    });
    afterAll(async () => {
      await render?.stop();
      await inProcess?.close();
      await app?.close();
      await receiver?.stop();
    });

    it('the render worker process serves render durations and job outcomes, and the Temporal SDK serves its own metrics on TEMPORAL_METRICS_BIND', async () => {
      const [metricsPort, corePort] = [await freePort(), await freePort()];
      render = spawnRenderWorker(app, { METRICS_PORT: String(metricsPort), TEMPORAL_METRICS_BIND: `127.0.0.1:${corePort}` });
      await render.ready;
      const url = `http://127.0.0.1:${metricsPort}/metrics`;
      const before = await scrape(url);
      expect(before.status).toBe(200);
      expect(sample(before.text, 'formwork_render_duration_seconds_count', { kind: 'pdf', outcome: 'ok' })).toBeUndefined();

      const generated = await app.request('POST', '/api/documents/generate', {
        token: docs.apiKey,
        body: { templateId: docs.templateId, format: 'pdf', variables: { customer: 'Rendered', items: [{ label: 'Consulting', amount: 1200 }] } },
      });
      expect(generated.status).toBe(201);
      expect((await waitForJob(app, docs.apiKey, generated.body.jobId)).status).toBe('completed');

      const after = (await scrape(url)).text;
      expect(sample(after, 'formwork_render_duration_seconds_count', { kind: 'pdf', outcome: 'ok' })).toBe(1);
      expect(sample(after, 'formwork_render_duration_seconds_sum', { kind: 'pdf', outcome: 'ok' })).toBeGreaterThan(0);
      expect(sample(after, 'formwork_document_jobs_finished_total', { status: 'completed' })).toBe(1);
      // The database figures are the API's: a worker replica does not repeat them.
      expect(after).not.toContain('formwork_document_jobs_open');

      const renderQueue = `${app.env.TEMPORAL_TASK_QUEUE_PREFIX}-render`;
      const core = await waitFor(
        async () => {
          const { text } = await scrape(`http://127.0.0.1:${corePort}/metrics`);
          return sample(text, 'temporal_worker_task_slots_available', { task_queue: renderQueue, worker_type: 'ActivityWorker' }) !== undefined ? text : undefined;
        },
        { timeoutMs: 20_000, what: "the Temporal SDK's task-slot gauge of the render queue" },
      );
      expect(sample(core, 'temporal_activity_execution_latency_count', { task_queue: renderQueue, activity_type: 'renderJob' })).toBeGreaterThanOrEqual(1);
    });

    it('the main worker counts webhook delivery attempts by outcome', async () => {
      inProcess = await startMetricsServer({ ...app.services, config: { metrics: { port: 0, host: '127.0.0.1' } } }, { global: true });
      const ws = await flowWorkspace(app);
      receiver.respondOn('/flaky', [500], 200);
      const gate = await createGate(app, ws.key, { name: 'Metrics deliveries', deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/flaky`, secret: 'whsec_metrics_test' }] });
      const submitted = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: { n: 1 } } });
      expect(submitted.status).toBe(201);
      await waitFor(
        async () => ((await app.request('GET', `/api/flow/runs/${submitted.body.id}`, { token: ws.key })).body.status === 'completed' ? true : undefined),
        { timeoutMs: 30_000, what: 'the Flow run to be delivered on its second attempt' },
      );
      const { text } = await scrape(inProcess!.url);
      expect(sample(text, 'formwork_webhook_delivery_attempts_total', { outcome: 'retryable' })).toBe(1);
      expect(sample(text, 'formwork_webhook_delivery_attempts_total', { outcome: 'delivered' })).toBe(1);
      expect(text).not.toContain(gate.id);
    });

    it("counts a gate's circuit breaker opening when a run's deliveries fail, and shows it open", async () => {
      const ws = await flowWorkspace(app);
      receiver.respondOn('/down', [], 500);
      const gate = await createGate(app, ws.key, {
        name: 'Metrics circuit',
        circuitBreakerEnabled: true,
        maxFailures: 1,
        deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/down`, secret: 'whsec_metrics_circuit' }],
      });
      const before = (await scrape(inProcess!.url)).text;
      expect(sample(before, 'formwork_flow_circuit_openings_total')).toBe(0);
      const submitted = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: { n: 2 } } });
      expect(submitted.status).toBe(201);
      await waitFor(
        async () => ((await app.request('GET', `/api/flow/runs/${submitted.body.id}`, { token: ws.key })).body.status === 'failed' ? true : undefined),
        { timeoutMs: 30_000, what: 'the Flow run to fail after its four delivery attempts' },
      );
      const { text } = await scrape(inProcess!.url);
      expect(sample(text, 'formwork_flow_circuit_openings_total')).toBe(1);
      expect(sample(text, 'formwork_flow_circuit_breakers', { state: 'open' })).toBe(1);
      expect(sample(text, 'formwork_webhook_delivery_attempts_total', { outcome: 'retryable' })).toBe(1 + 4);
    });
  });

  it('the Grafana dashboard and docs/operations.md name only metrics the roles serve', () => {
    const root = join(__dirname, '../../..');
    const dashboard = JSON.parse(readFileSync(join(root, 'docs/grafana/formwork-dashboard.json'), 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const queried = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/\b(formwork|temporal)_\w+/g) ?? []));
    const documented = [...readFileSync(join(root, 'docs/operations.md'), 'utf8').matchAll(/`(formwork_[a-z_]*[a-z])`/g)].map((m) => m[1]);
    const served = new Set(scraped.flatMap((text) => [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1])));
    const family = (name: string) => name.replace(/_(bucket|count|sum)$/, '');
    expect(scraped.length).toBeGreaterThanOrEqual(5); // the API's, both worker roles' and the SDK's, scraped above
    expect(queried.length).toBeGreaterThan(10);
    expect([...new Set([...queried, ...documented].map(family))].filter((name) => !served.has(name))).toEqual([]);
  });
});
