import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * How much the machine is slowing work down right now, measured in the same run (docs/testing.md): a
 * process of its own does a fixed piece of CPU work (about 2 ms on an idle core) every 20 ms and records
 * the time that passed over the CPU time it got. On an idle machine the ratio is about 1; when other
 * work (another test run, Chromium, Temporal) leaves it half a core, about 2. A test whose bound is a
 * deadline of the service (an answer within the evaluation budget, a probe never held the budget)
 * scales that deadline by the ratio over the same interval, so a machine busy with other work does not
 * fail it while a service that stalls still does. The monitor uses about a tenth of one core.
 */
export interface ContentionMonitor {
  /** The mean ratio over samples in [from, to] (absolute ms, `now()`), at least 1; 1 without samples. */
  factor(from: number, to: number): number;
  stop(): Promise<void>;
}

/** Absolute milliseconds, comparable across threads and processes (performance.now() is not). */
export const now = () => performance.timeOrigin + performance.now();

const MONITOR = `
  const now = () => performance.timeOrigin + performance.now();
  let sink = 0;
  setInterval(() => {
    const wall = now();
    const cpu = process.cpuUsage();
    for (let i = 0; i < 5e5; i += 1) sink = (sink + i * 7) % 1000003;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    const wallMs = now() - wall;
    if (cpuMs > 0) process.stdout.write(JSON.stringify({ at: now(), ratio: wallMs / cpuMs }) + '\\n');
  }, 20);
`;

export async function startContentionMonitor(): Promise<ContentionMonitor> {
  const child: ChildProcess = spawn(process.execPath, ['-e', MONITOR], { stdio: ['ignore', 'pipe', 'inherit'] });
  const samples: Array<{ at: number; ratio: number }> = [];
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    lines.on('line', (line) => {
      samples.push(JSON.parse(line) as { at: number; ratio: number });
      if (samples.length === 1) resolve();
    });
  });
  return {
    factor(from, to) {
      const within = samples.filter((s) => s.at >= from && s.at <= to + 40).map((s) => s.ratio);
      if (within.length === 0) return 1;
      return Math.max(1, within.reduce((a, b) => a + b, 0) / within.length);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
