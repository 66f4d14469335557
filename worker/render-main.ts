import { runQueueRole } from './worker-role';

/**
 * `npm run start:render-worker`: the render worker role, against configured services. It polls the
 * render task queue only: document renders and Flow native renders, with this process's Chromium
 * pool, Excel threads and evaluation processes. Its own process, so a render that crashes it, runs
 * it out of memory or stalls it leaves the main queue (workflows, e-mail, approvals, deliveries)
 * running; Temporal hands an interrupted render to the next render worker (the activities
 * heartbeat and are idempotent). `npm start` runs it as a child process (worker/worker-role.ts).
 */
runQueueRole('render-worker', 'render');
