import type { JobOutcome } from '../../activities/documents';
import { processJob, type JobWorkflowOptions } from './process-job';

export interface GenerateDocumentInput extends JobWorkflowOptions {
  jobId: string;
}

/** A single generation; the workflow id is the job id. Cancelling the workflow cancels the job. */
export async function generateDocumentWorkflow(input: GenerateDocumentInput): Promise<JobOutcome> {
  const { outcome, announced } = await processJob(input.jobId, input);
  await announced;
  return outcome;
}
