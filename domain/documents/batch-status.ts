import { defineStateMachine } from '../state-machine';

/** `document_batches.status`. Moved only by db/documents/batch-state.ts. */
const BATCH_STATUSES = ['processing', 'completed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** A batch is `completed` once its workflow has seen every job end (each job keeps its own status). */
export const BATCH_TRANSITIONS: Readonly<Record<BatchStatus, readonly BatchStatus[]>> = {
  processing: ['completed'],
  completed: [],
};

export const batchMachine = defineStateMachine(BATCH_STATUSES, ['processing'], BATCH_TRANSITIONS);
