import type { RetryPolicy } from '@temporalio/common';

/**
 * Every activity retry policy of the workflows, by name, so that "how hard do we try" is decided
 * in one place and a new workflow picks a named policy instead of inventing one. Which errors a
 * policy retries at all is the error's business: activities throw through activities/failure.ts,
 * which marks a catalogued code non-retryable unless retrying can help (domain/errors.ts).
 */
export const RETRY = {
  /**
   * E-mail through SMTP (account e-mails, invitations, deletion notices): an outage is retried for
   * about a day; a bad address or a vanished user fails at once (non-retryable code).
   */
  mail: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 60 },

  /** A purge, once begun, must finish (the account is no longer restorable): no attempt limit, visibly slow. */
  purge: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },

  /** Document jobs' and batches' database bookkeeping (claim, list, finish, prepare events). */
  documentBookkeeping: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },

  /**
   * One document's render (render queue). Three attempts for a crashing renderer, then the job fails
   * with the last error; a job that no longer exists is not retried.
   */
  documentRender: { initialInterval: '2 seconds', maximumAttempts: 3, nonRetryableErrorTypes: ['ERR_JOB_001'] },

  /**
   * Flow's records, approvals and review digests: database and SMTP outages are waited out, with no
   * attempt limit, because the run was accepted and must reach its end.
   */
  flowBookkeeping: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },

  /** A Flow run's artefact (native or custom API): a few attempts, then the run fails with the last error (spec: "failures retried then recorded"). */
  flowRender: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },

  /**
   * A webhook attempt. Receiver failures are outcomes, not errors (the workflow owns that schedule,
   * WEBHOOK_RETRY_DELAYS); only infrastructure failures reach this policy, and a database outage
   * is waited out instead of losing the delivery.
   */
  delivery: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },

  /**
   * A reporting query (runDirectQuery, query task queue): 3 attempts, 5 s then 30 s apart. Only a
   * failed connection is retryable (ECONNREFUSED, 57P01, ...); SQL, timeout and limit errors fail at once.
   */
  query: { initialInterval: '5 seconds', backoffCoefficient: 6, maximumInterval: '30 seconds', maximumAttempts: 3 },

  /**
   * A query an agent runs (runAgentQuery, async completion): 3 attempts, the first wait
   * REPORTING_AGENT_RETRY_DELAY_SECONDS (1 min; the workflow sets it from the plan), then 5× it. An
   * attempt whose agent went silent times out and is retried; the agent's SQL and limit errors are not.
   */
  agentQuery: { initialInterval: '1 minute', backoffCoefficient: 5, maximumInterval: '5 minutes', maximumAttempts: 3 },

  /**
   * A report run's records (plan, dataset progress, status moves, outputs): a database outage is
   * waited out, because the run was accepted and must reach an end. A catalogued error (a version
   * that no longer exists, values the query refuses) is not retryable and fails the run.
   */
  reportBookkeeping: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },

  /**
   * A reporting probe (a datasource test, schema discovery or query preview the API waits for,
   * workflows/reporting/reporting-probe.workflow.ts): one attempt; the person asks again.
   */
  reportingProbe: { maximumAttempts: 1 },

  /**
   * A preview render the API waits for (workflows/documents/render-preview.workflow.ts): one attempt;
   * the person sees the error and asks again.
   */
  renderPreview: { maximumAttempts: 1 },

  /**
   * A batch's archive (render queue): a crashed worker or a storage outage is retried a few times, a
   * minute apart at most; then the archive is recorded failed and the batch completes without it.
   */
  batchArchive: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },

  /** A report run's outputs (render queue): three attempts for a crashing renderer, then the run fails at `render`. */
  reportRender: { initialInterval: '2 seconds', maximumAttempts: 3 },

  /** The maintenance schedule's sweeps: the next scheduled run tries again anyway. */
  maintenance: { maximumAttempts: 3 },
} satisfies Record<string, RetryPolicy>;
