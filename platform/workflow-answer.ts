import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { AppError, ERRORS, type ErrorCode } from '../domain/errors';

/**
 * Waits for a workflow the API started for a person who is waiting too (a datasource probe, a
 * preview render): its result, or `late()` once `waitMs` passed, the workflow then terminated so
 * that no worker goes on with work nobody reads. A failure becomes the catalogue's error: the
 * activity's code and relatedInfo (activities/failure.ts), a Temporal timeout `late()` as well.
 */
export async function awaitAnswer<T>(temporal: Client, workflowId: string, waitMs: number, late: () => AppError): Promise<T> {
  const handle = temporal.workflow.getHandle(workflowId);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), waitMs);
  });
  try {
    return (await Promise.race([handle.result(), deadline])) as T;
  } catch (err) {
    if (err instanceof AppError) {
      await handle.terminate('the API stopped waiting').catch(() => undefined);
      throw err;
    }
    throw answerError(err, late);
  } finally {
    clearTimeout(timer);
  }
}

function answerError(err: unknown, late: () => AppError): unknown {
  let cause: unknown = err instanceof WorkflowFailedError ? err.cause : err;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof TimeoutFailure) return late();
  if (cause instanceof ApplicationFailure && cause.type && cause.type in ERRORS) {
    return new AppError(cause.type as ErrorCode, cause.message, (cause.details?.[0] as Record<string, unknown> | undefined) ?? undefined);
  }
  return err;
}
