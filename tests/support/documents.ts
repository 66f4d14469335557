import { createKey } from './api-keys';
import type { TestApp } from './app';
import { signUp, type SignedUpUser } from './factories';
import { createTemplate, personalProjectId, publish, type TemplateBody } from './templates';
import { waitFor } from './wait';

export interface DocumentProject {
  user: SignedUpUser;
  projectId: string;
  templateId: string;
  templateSlug: string;
  /** An API key with the default permissions (generate, read documents, read templates). */
  apiKey: string;
}

/** A verified user with a published template and an API key: what a document test starts from. */
export async function setupDocumentProject(app: TestApp, template: Partial<TemplateBody> = {}): Promise<DocumentProject> {
  const user = await signUp(app, { verified: true });
  const created = await createTemplate(app, user.accessToken, template);
  await publish(app, user.accessToken, created.id);
  const key = await createKey(app, user.accessToken);
  return { user, projectId: await personalProjectId(app, user.id), templateId: created.id, templateSlug: created.slug, apiKey: key.plainKey };
}

/** Polls the job until it has ended and returns its status body. */
export async function waitForJob(app: TestApp, token: string, jobId: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(
    async () => {
      const res = await app.request('GET', `/api/documents/jobs/${jobId}`, { token });
      return ['completed', 'failed', 'cancelled'].includes(res.body.status) ? res.body : undefined;
    },
    { timeoutMs, what: `job ${jobId} to end` },
  );
}

export async function download(url: string): Promise<{ status: number; body: Buffer; headers: Headers }> {
  const res = await fetch(url);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

/**
 * A template whose HTML grows about 1 KB per row (`linesOf(n)`): 10 rows print, 100 are over a
 * 64 KB RENDER_HTML_MAX_BYTES, so a job fails the way a real one does.
 */
export const GROWING_LINES_TEMPLATE = {
  schema: {
    pageSize: 'A4' as const,
    sections: [{ id: 'main', components: [{ id: 'rows', type: 'repeat' as const, props: { dataSource: 'rows', components: [{ id: 'line', type: 'text', props: { text: '{{item}}: {{note}}' } }] } }] }],
  },
  variables: [
    { name: 'rows', type: 'array' as const, required: true, items: { type: 'string' as const } },
    { name: 'note', type: 'string' as const, required: true },
  ],
  constants: {},
  calculatedVariables: [],
};

/** The variables of GROWING_LINES_TEMPLATE for `rows` rows of about 1 KB each. */
export const linesOf = (rows: number) => ({ rows: Array.from({ length: rows }, (_, i) => `row ${i}`), note: 'n'.repeat(1000) });
