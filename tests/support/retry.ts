/**
 * One retry for a test that fails, with the first failure printed (jest's "RETRY 1" block): a
 * second failure fails the run as before. The integration and hostile tests assert bounds of time
 * and run beside a Temporal server, Postgres and Chromium on a 2-core machine; a bound that a busy
 * moment breaks once must not throw away a whole CI run. A retried test is a flake to fix: search
 * the CI log for "RETRY 1".
 */
jest.retryTimes(1, { logErrorsBeforeRetry: true });
