import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { adminQuery, TEMPLATE_DATABASE_ENV } from './database';

export default async function globalTeardown(): Promise<void> {
  const env = (globalThis as Record<string, unknown>).__TEMPORAL_ENV__ as TestWorkflowEnvironment | undefined;
  await env?.teardown();
  const template = process.env[TEMPLATE_DATABASE_ENV];
  if (template) await adminQuery(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
}
