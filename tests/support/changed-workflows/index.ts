/**
 * The product's workflows with one changed without a patch, for the replay test's proof that such a
 * change fails CI (tests/integration/workflows/replay.test.ts): `generateDocumentWorkflow` now sleeps
 * a second before it starts, a new first command that no recorded history has.
 */
import { sleep } from '@temporalio/workflow';
import type { GenerateDocumentInput } from '../../../workflows/documents/generate-document.workflow';
import { generateDocumentWorkflow as original } from '../../../workflows/documents/generate-document.workflow';

export * from '../../../workflows';

export async function generateDocumentWorkflow(input: GenerateDocumentInput): ReturnType<typeof original> {
  await sleep(1000);
  return original(input);
}
