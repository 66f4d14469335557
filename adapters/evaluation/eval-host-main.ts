import { AppError } from '../../domain/errors';
import { createEvalPool, type EvalPoolOptions, type PackedEvaluator } from './eval-pool';
import type { HostCall, HostReply } from './eval-host';
import type { Packed } from './eval-task';

/**
 * The evaluation host (eval-host.ts): a process whose only work is the evaluation pool. It takes
 * calls from the service process that started it, runs them in the pool's workers and answers; when
 * that process disconnects (or dies), it ends its workers and exits.
 */
const options = JSON.parse(process.argv[2] ?? '{}') as EvalPoolOptions;
const evaluator: PackedEvaluator = createEvalPool(options);

/** What the service sent and what the workers answer stay packed: the host forwards bytes. */
function run(call: HostCall): Promise<Packed<unknown>> {
  switch (call.op) {
    case 'validate':
      return evaluator.validate(call.req);
    case 'calculate':
      return evaluator.calculate(call.req);
    case 'check':
      return evaluator.check(call.tenant, call.name, call.args);
  }
}

function answer(reply: HostReply): void {
  if (process.connected) process.send?.(reply);
}

process.on('message', (call: HostCall) => {
  run(call).then(
    (value) => answer({ id: call.id, ok: true, value }),
    (err: unknown) =>
      answer({
        id: call.id,
        ok: false,
        error: err instanceof AppError ? { code: err.code, message: err.message, relatedInfo: err.relatedInfo } : { message: String((err as Error)?.message ?? err) },
      }),
  );
});

process.on('disconnect', () => {
  void evaluator.close().finally(() => process.exit(0));
});
