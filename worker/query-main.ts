import { runQueueRole } from './worker-role';

/**
 * `npm run start:query-worker`: the query worker role, against configured services. It polls the
 * query task queue only: report runs' queries and the API's datasource calls (connection tests,
 * schema discovery, query previews; api/reporting/probes.ts), REPORTING_QUERY_CONCURRENCY at once.
 * Tenants choose the servers it talks to, so it is a process of its own with a heap limit
 * (`npm start` gives it QUERY_WORKER_MAX_HEAP_MB; compose a memory limit): a hostile server that
 * got past the caps could at worst end this process, never the API or the main queue, and Temporal
 * hands its runs' queries to the next query worker. `npm start` runs it as a child process
 * (worker/worker-role.ts).
 */
runQueueRole('query-worker', 'query');
