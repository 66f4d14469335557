import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RETRY } from '../../../workflows/shared/retry-policies';

const root = join(__dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The option object of every `proxyActivities<…>({ … })` call, by file. */
function proxyOptions(): Array<{ file: string; options: string }> {
  return sources(join(root, 'workflows')).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/proxyActivities<[^>]+>\(\{([\s\S]*?)\}\);/g)].map((m) => ({ file: relative(root, file), options: m[1] }));
  });
}

describe('named retry policies (workflows/shared/retry-policies.ts)', () => {
  it('every proxyActivities in workflows/ uses a named policy, and no policy is written inline', () => {
    const calls = proxyOptions();
    expect(calls.length).toBeGreaterThan(10);
    const unnamed = calls.filter((c) => !/\bretry: RETRY\.\w+/.test(c.options)).map((c) => c.file);
    expect(unnamed).toEqual([]);
    for (const c of calls) {
      const name = /\bretry: RETRY\.(\w+)/.exec(c.options)![1];
      expect({ file: c.file, known: name in RETRY }).toEqual({ file: c.file, known: true });
    }
  });

  it('keeps the schedules the workflows used before they had names', () => {
    expect(RETRY.mail).toEqual({ initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 60 });
    expect(RETRY.purge).toEqual({ initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' });
    expect(RETRY.documentBookkeeping).toEqual({ initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 });
    expect(RETRY.documentRender).toEqual({ initialInterval: '2 seconds', maximumAttempts: 3, nonRetryableErrorTypes: ['ERR_JOB_001'] });
    expect(RETRY.flowBookkeeping).toEqual({ initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' });
    expect(RETRY.flowRender).toEqual({ initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 });
    expect(RETRY.delivery).toEqual({ initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' });
    expect(RETRY.maintenance).toEqual({ maximumAttempts: 3 });
  });

  it('retries a reporting query 3 times, 5 s then 30 s apart', () => {
    expect(RETRY.query).toEqual({ initialInterval: '5 seconds', backoffCoefficient: 6, maximumInterval: '30 seconds', maximumAttempts: 3 });
  });
});
