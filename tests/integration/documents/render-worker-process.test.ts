import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { pdfText } from '../../support/rendering-pdf';
import { descendantsOf, isAlive, spawnRenderWorker, startTimeOf, type RenderWorkerProcess } from '../../support/render-worker';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/**
 * The render worker as its own process role (`node dist/worker/render-main.js`), next to an app
 * whose in-process worker polls the main task queue only: documents are rendered by that process,
 * and killing it in the middle of a render leaves the main queue working and loses nothing.
 */
describe('render worker process role', () => {
  let app: TestApp;
  let docs: DocumentProject;
  let ws: FlowWorkspace;
  let receiver: WebhookReceiver;
  let scratch: string;
  const started: RenderWorkerProcess[] = [];
  const leftovers = new Map<number, string | undefined>();

  const renderWorker = (env: Record<string, string> = {}) => {
    const w = spawnRenderWorker(app, env);
    started.push(w);
    return w;
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'formwork-render-role-'));
    receiver = await startWebhookReceiver();
    app = await startTestApp({ queues: ['main', 'egress'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } });
    docs = await setupDocumentProject(app);
    ws = await flowWorkspace(app);
  });
  afterAll(async () => {
    for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(started.map((w) => w.exited));
    // Whatever a killed worker left running (processes these tests started, through it).
    for (const [pid, start] of leftovers) if (isAlive(pid, start)) process.kill(pid, 'SIGKILL');
    await app.close();
    await receiver.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  const generate = async (customer: string) => {
    const res = await app.request('POST', '/api/documents/generate', {
      token: docs.apiKey,
      body: { templateId: docs.templateId, format: 'pdf', variables: { customer, items: [{ label: 'Consulting', amount: 1200 }] } },
    });
    expect(res.status).toBe(201);
    return res.body.jobId as string;
  };
  const jobStatus = async (jobId: string) => (await app.request('GET', `/api/documents/jobs/${jobId}`, { token: docs.apiKey })).body.status as string;

  /**
   * The Temporal worker identity (`<pid>@<host>`) that ran the render activity's last attempt, the one that
   * completed, once its completion is in the history (the job's row says completed a moment before the
   * activity's answer reaches Temporal: on a loaded machine, seconds).
   */
  const renderedBy = (workflowId: string) =>
    waitFor(async () => {
      const events = (await app.services.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const completed = events.find((e) => e.activityTaskCompletedEventAttributes);
      const startedId = completed?.activityTaskCompletedEventAttributes?.startedEventId;
      const startedEvent = events.find((e) => String(e.eventId) === String(startedId));
      return startedEvent?.activityTaskStartedEventAttributes?.identity || undefined;
    }, { what: `the completed render activity in ${workflowId}'s history` });

  it('renders a PDF generated through the API in the render-worker process; the app itself polls only the main queue', async () => {
    const w = renderWorker();
    await w.ready;
    const jobId = await generate('Render Role Rita');
    const job = await waitForJob(app, docs.apiKey, jobId);
    expect(job.status).toBe('completed');
    expect(await pdfText((await download(job.downloadUrl)).body)).toContain('Dear Render Role Rita');
    expect(await renderedBy(jobId)).toMatch(new RegExp(`^${w.pid}@`));
    // A clean stop (SIGTERM) ends the role.
    await w.stop();
    expect((await w.exited).code).toBe(0);
  });

  it('renders a template preview in the render-worker process: the API starts no Chromium of its own', async () => {
    const w = renderWorker();
    await w.ready;
    const res = await fetch(`${app.url}/api/templates/${docs.templateId}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${docs.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ variables: { customer: 'Preview Paula', items: [{ label: 'Consulting', amount: 1200 }] } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(await pdfText(Buffer.from(await res.arrayBuffer()))).toContain('Dear Preview Paula');
    // The Chromium that printed it runs below the render worker; nothing below this process (the API) is a browser.
    const browsers = (pids: number[]) => pids.filter((pid) => /chrom/i.test(cmdline(pid)));
    expect(browsers(descendantsOf(w.pid)).length).toBeGreaterThan(0);
    const ours = new Set(descendantsOf(w.pid));
    expect(browsers(descendantsOf(process.pid).filter((pid) => !ours.has(pid)))).toEqual([]);
    // Its workflow is findable by kind and project in Temporal, and the render worker ran its activity.
    const [{ workflowId }] = await waitFor(async () => {
      const found = [];
      for await (const wf of app.services.temporal.workflow.list({ query: `FormworkKind = 'render-preview' AND FormworkProjectId = '${docs.projectId}'` })) found.push(wf);
      return found.length > 0 ? found : undefined;
    }, { what: 'the preview workflow in Temporal visibility' });
    expect(workflowId).toMatch(/^render-preview-[0-9a-f-]{36}$/);
    expect(await renderedBy(workflowId)).toMatch(new RegExp(`^${w.pid}@`));
    await w.stop();
  });

  it('SIGKILL mid-render: the main queue keeps working, and the document completes on a new render worker', async () => {
    // A browser that never comes up: the render stays in progress until the worker dies (the
    // script ends itself once its parent is gone, so it outlives nothing).
    const stuckBrowser = join(scratch, 'stuck-browser.sh');
    await writeFile(stuckBrowser, '#!/bin/sh\nwhile kill -0 "$PPID" 2>/dev/null; do sleep 0.1; done\n');
    await chmod(stuckBrowser, 0o755);
    // Its temp files (the browser profile) go to the scratch directory: a killed process cleans nothing up.
    const first = renderWorker({ PUPPETEER_EXECUTABLE_PATH: stuckBrowser, TMPDIR: scratch });
    await first.ready;

    const jobId = await generate('Survivor Sam');
    // The first worker claimed the job and is rendering it (its browser is launching).
    const launching = () => descendantsOf(first.pid).some((pid) => cmdline(pid).includes(stuckBrowser));
    await waitFor(async () => (await jobStatus(jobId)) === 'processing' && launching(), { what: 'the render to start' });
    // Each with its start time: a pid reused by another process after these ended is not one of them.
    const below = descendantsOf(first.pid).map((pid) => ({ pid, start: startTimeOf(pid) }));
    below.forEach((p) => leftovers.set(p.pid, p.start));
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await jobStatus(jobId)).toBe('processing');

    // No render worker at all now; the main queue (workflows, activities, webhooks) still does its work.
    const gate = await createGate(app, ws.key, { name: 'Main queue alive', deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/flow`, secret: 'whsec_render_role' }] });
    const submitted = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: { n: 1 } } });
    expect(submitted.status).toBe(201);
    const run = await waitFor(
      async () => {
        const r = (await app.request('GET', `/api/flow/runs/${submitted.body.id}`, { token: ws.key })).body;
        return r.status === 'completed' ? r : undefined;
      },
      { timeoutMs: 30_000, what: 'the Flow run to complete on the main queue' },
    );
    expect(run.deliveryStatus).toBe('completed');
    const [delivery] = await receiver.waitForRequests(1);
    expect(delivery.json).toMatchObject({ event: 'flow.run.completed' });
    expect(await jobStatus(jobId)).toBe('processing');

    // The killed worker's processes are gone with it (nothing polls or renders as an orphan).
    await waitFor(() => below.every((p) => !isAlive(p.pid, p.start)), { what: 'the killed worker’s processes to end' });

    // A new render worker picks the render up once Temporal sees the old attempt's heartbeat stop.
    const second = renderWorker();
    await second.ready;
    const job = await waitForJob(app, docs.apiKey, jobId, 90_000);
    expect(job.status).toBe('completed');
    expect(await pdfText((await download(job.downloadUrl)).body)).toContain('Dear Survivor Sam');
    expect(await renderedBy(jobId)).toMatch(new RegExp(`^${second.pid}@`));
    const [row] = await app.services.db.query(`SELECT attempts FROM document_jobs WHERE id = $1`, [jobId]);
    expect(row.attempts).toBe(2);
    await second.stop();
  });
});
