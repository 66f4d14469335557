import { FairScheduler } from '../../domain/fair-scheduler';

/** A job the test finishes by hand. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { job: () => done, open };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('fair scheduler', () => {
  afterEach(() => jest.restoreAllMocks());

  it('keeps a slot free for other tenants while one floods, and serves tenants round-robin', async () => {
    const s = new FairScheduler(3);
    const started: string[] = [];
    const flood = Array.from({ length: 5 }, () => gate());
    flood.forEach((g, i) => void s.submit('flood', () => (started.push(`flood${i}`), g.job())));
    await flush();
    expect(started).toEqual(['flood0', 'flood1']); // all but one slot
    const other = gate();
    const answer = s.submit('other', () => (started.push('other'), other.job()));
    await flush();
    expect(started).toEqual(['flood0', 'flood1', 'other']);
    other.open();
    await answer;
    flood[0].open();
    await flush();
    expect(started).toEqual(['flood0', 'flood1', 'other', 'flood2']);
    expect(s.waiting).toBe(2);
  });

  it('holds a tenant whose recent jobs were expensive to one slot, and lets its cost decay', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const s = new FairScheduler(3);
    const first = gate();
    const running = s.submit('heavy', first.job);
    now += 1500; // the job ran 1.5 s
    first.open();
    await running;
    await flush(); // the job's cost is charged once it has settled
    expect(s.isExpensive('heavy')).toBe(true);
    expect(s.isExpensive('other')).toBe(false);
    const started: number[] = [];
    const next = [gate(), gate()];
    next.forEach((g, i) => void s.submit('heavy', () => (started.push(i), g.job())));
    await flush();
    expect(started).toEqual([0]); // one slot only
    next[0].open();
    await flush();
    expect(started).toEqual([0, 1]);
    next[1].open();
    await flush();
    now += 60_000; // six half-lives later it is cheap again
    expect(s.isExpensive('heavy')).toBe(false);
    const again = [gate(), gate()];
    const ran: number[] = [];
    again.forEach((g, i) => void s.submit('heavy', () => (ran.push(i), g.job())));
    await flush();
    expect(ran).toEqual([0, 1]);
    again.forEach((g) => g.open());
  });

  it('keeps all but one slot for a busy tenant whose jobs are cheap, however many it sends', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const s = new FairScheduler(3);
    /** `count` jobs of `ms` each, one after the other. */
    const run = async (tenant: string, count: number, ms: number) => {
      for (let i = 0; i < count; i += 1) {
        const g = gate();
        const done = s.submit(tenant, g.job);
        now += ms;
        g.open();
        await done;
      }
    };
    // 1,000 jobs of 4 ms: 4 s of slot time, far more than HEAVY_MS, but each one cheap.
    await run('busy', 1000, 4);
    const started: number[] = [];
    const next = [gate(), gate(), gate()];
    next.forEach((g, i) => void s.submit('busy', () => (started.push(i), g.job())));
    await flush();
    expect(started).toEqual([0, 1]);
    // The same slot time in a few expensive jobs holds the tenant to one slot.
    next.forEach((g) => g.open());
    await flush();
    await run('expensive', 4, 1000);
    const heavy: number[] = [];
    const more = [gate(), gate()];
    more.forEach((g, i) => void s.submit('expensive', () => (heavy.push(i), g.job())));
    await flush();
    expect(heavy).toEqual([0]);
    more.forEach((g) => g.open());
  });

  it('answers a tenant with too many jobs waiting with 429 ERR_QUOTA_003 at once', async () => {
    const s = new FairScheduler(1, 1, 2);
    const g = gate();
    void s.submit('t', g.job);
    void s.submit('t', g.job);
    void s.submit('t', g.job);
    await expect(s.submit('t', g.job)).rejects.toMatchObject({ code: 'ERR_QUOTA_003', status: 429, relatedInfo: { retryAfter: 1 } });
    g.open();
  });
  it('gives a tenant with a long-running job no further slot until it ends, and charges running cost', async () => {
    const s = new FairScheduler(4);
    const started: number[] = [];
    const jobs = Array.from({ length: 3 }, () => gate());
    void s.submit('t', () => (started.push(0), jobs[0].job()));
    await flush();
    s.markLong('t', true);
    jobs.slice(1).forEach((g, i) => void s.submit('t', () => (started.push(i + 1), g.job())));
    await flush();
    expect(started).toEqual([0]);
    // Another tenant is not held back.
    const other = gate();
    void s.submit('o', () => other.job());
    s.markLong('t', false);
    jobs[0].open();
    await flush();
    await flush();
    expect(started).toEqual([0, 1, 2]);
    // CPU used while running counts at once: 1.2 s over one job is expensive.
    s.chargeRunning('burner', 1200);
    expect(s.isExpensive('burner')).toBe(true);
  });

  it('counts a job used a second of CPU however long it waited for it: running charges do not decay', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const s = new FairScheduler(3);
    const job = gate();
    // A runaway job on a loaded machine: 600 ms of CPU, then a minute (six half-lives) waiting for a core, then 500 ms more.
    const done = s.submit('starved', () => job.job(), () => 1100);
    s.chargeRunning('starved', 600);
    now += 60_000;
    s.chargeRunning('starved', 500);
    expect(s.isExpensive('starved')).toBe(true);
    // When it ends its whole cost replaces what it charged while running: counted once, not twice.
    s.settleRunning('starved', 1100);
    job.open();
    await done;
    await flush(); // charged as the job's slot is given back
    expect(s.isExpensive('starved')).toBe(true);
    now += 10_000; // one half-life: 550 ms left
    expect(s.isExpensive('starved')).toBe(false);
  });
});
