import { execFileSync } from 'node:child_process';
import { AppError } from '../../../domain/errors';
import { useEvaluator } from '../../support/evaluation';
import { waitFor } from '../../support/wait';
import type { GateValidationDefinition } from '../../../domain/flow/gate.types';

/** Pids of this process's children whose command line contains `pattern` (pgrep). */
function childrenOf(parent: number, pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(parent), '-f', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

const gate = (expression: string): GateValidationDefinition => ({
  validationMode: 'variables',
  schema: { type: 'object', properties: { n: { type: 'number' } } } as GateValidationDefinition['schema'],
  businessRules: [{ id: 'r1', expression, message: 'n must be positive' }],
  freetextConfig: null,
});

describe('evaluation host: the pool runs in a process of its own', () => {
  const evaluator = useEvaluator({ poolSize: 1, timeoutMs: 1000 });

  it('forks the evaluation workers from the host, never from the service process', async () => {
    const outcome = await evaluator.validate({ tenant: 'p1', gateId: 'g1', version: 1, definition: gate('n > 0'), payload: { n: 2 } });
    expect(outcome.valid).toBe(true);
    const [host] = childrenOf(process.pid, 'eval-host-main');
    expect(host).toBeGreaterThan(0);
    expect(childrenOf(process.pid, 'eval-worker')).toEqual([]);
    expect(childrenOf(host, 'eval-worker').length).toBeGreaterThan(0);
  });

  it('answers a call that was under way when the host died, from a new host', async () => {
    const [host] = childrenOf(process.pid, 'eval-host-main');
    const slow = evaluator.validate({ tenant: 'p1', gateId: 'g2', version: 1, definition: gate('($f := function($n){ $f($n + 1) }; $f(0))'), payload: { n: 1 } });
    // Killed while its worker runs the endless recursion.
    await waitFor(() => childrenOf(host, 'eval-worker').length > 0);
    process.kill(host, 'SIGKILL');
    const outcome = await slow;
    expect(outcome.valid).toBe(false);
    expect(outcome.steps.find((s) => s.status === 'error')).toBeDefined();
    const [replacement] = childrenOf(process.pid, 'eval-host-main');
    expect(replacement).not.toBe(host);
    const next = await evaluator.validate({ tenant: 'p1', gateId: 'g1', version: 1, definition: gate('n > 0'), payload: { n: -1 } });
    expect(next.valid).toBe(false);
    expect(next.failedLayer).toBe('business_rules');
  });

  it('keeps the catalogued error a check throws, code and status', async () => {
    const err = await evaluator.check('p1', 'templateFile', '{ not json').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'ERR_TMPL_016', status: 400 });
    expect((err as Error).message).toMatch(/^Invalid JSON file format/);
  });
});
