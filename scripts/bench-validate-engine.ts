import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { compileGate, validatePayload } from '../domain/flow/engine';
import { gateSchemaToJsonSchema } from '../domain/flow/gate-json-schema';
import { BENCH_PAYLOAD as PAYLOAD, BENCH_RULES as RULES, benchSchema } from './bench-gate';
import { median } from './bench-stats';

/**
 * `npm run bench:validate-engine` (issue 17, goal 3a): the bare validation engine (schema layer and
 * the five business rules of the benchmark gate, as the evaluation workers run it) next to a
 * hand-written equivalent measured in the same run: ajv with the same schema as JSON Schema
 * (domain/flow/gate-json-schema.ts; ajv and ajv-formats are dev dependencies, used here only) plus
 * five plain JavaScript closures for the rules. Goal: engine ≤ 3× the hand-written time.
 *
 * The two sides take turns in short rounds, so both see the same state of a shared machine, and
 * each is timed in CPU time of this process; the figures are the medians of the rounds. Options: BENCH_ENGINE_ROUNDS (default 15),
 * BENCH_ENGINE_ROUND_MS (default 200).
 */

export interface EngineMeasurement {
  /** Microseconds per validation, the engine (validatePayload over the compiled gate). */
  engineUs: number;
  /** Microseconds per validation, ajv plus the hand-written rules. */
  handWrittenUs: number;
  /** engineUs / handWrittenUs; the goal is ≤ 3. */
  ratio: number;
}

type Payload = typeof PAYLOAD;

/** The five rules of BENCH_RULES in plain JavaScript, with JSONata's reading of missing fields. */
const HAND_RULES: Array<{ id: string; check: (p: Payload) => boolean }> = [
  {
    id: 'total-matches',
    check: (p) => {
      let sum = 0;
      for (const item of p.items) sum += item.price * item.qty;
      return Math.abs(sum - p.total) < 0.01;
    },
  },
  { id: 'discount-cap', check: (p) => (typeof p.discount === 'number' && p.discount <= 50) || p.paid === true },
  { id: 'due-after-issue', check: (p) => p.due === undefined || p.due.slice(0, 10) >= p.issued },
  { id: 'eur-vat', check: (p) => (p.currency !== undefined && p.currency !== 'EUR') || (typeof p.vat === 'number' && p.vat >= 0) },
  { id: 'item-count', check: (p) => p.items.length <= 100 },
];

function handWritten(): (payload: unknown) => { valid: boolean; errors: unknown[] } {
  const ajv = new Ajv2020({ allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(gateSchemaToJsonSchema(benchSchema()));
  return (payload) => {
    if (!validate(payload)) return { valid: false, errors: validate.errors ?? [] };
    const failed = HAND_RULES.filter((r) => !r.check(payload as Payload)).map((r) => r.id);
    return { valid: failed.length === 0, errors: failed };
  };
}


const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/**
 * Runs `op` in batches for `ms` of CPU time; CPU microseconds per call. CPU time rather than
 * wall-clock time: on a shared machine the wall clock also counts the time other processes held
 * the core, which would measure the load, not the code.
 */
async function timeRound(op: () => unknown, ms: number): Promise<number> {
  let n = 0;
  const start = cpuUs();
  let now = start;
  while (now - start < ms * 1000) {
    for (let i = 0; i < 200; i += 1) await op();
    n += 200;
    now = cpuUs();
  }
  return (now - start) / n;
}

export async function measureEngine(opts: { rounds?: number; roundMs?: number } = {}): Promise<EngineMeasurement> {
  const rounds = opts.rounds ?? Number(process.env.BENCH_ENGINE_ROUNDS ?? 15);
  const roundMs = opts.roundMs ?? Number(process.env.BENCH_ENGINE_ROUND_MS ?? 200);
  // As the evaluation worker holds it: compiled once per gate version (CompiledGateCache).
  const gate = compileGate({ validationMode: 'variables', schema: benchSchema(), businessRules: RULES, freetextConfig: null });
  const hand = handWritten();

  const first = await validatePayload(gate, PAYLOAD);
  if (!first.valid) throw new Error(`bench payload is invalid for the engine: ${JSON.stringify(first.details)}`);
  if (!hand(PAYLOAD).valid) throw new Error(`bench payload is invalid for ajv: ${JSON.stringify(hand(PAYLOAD).errors)}`);
  if (gate.rules.some((r) => !r.closure)) throw new Error('a benchmark rule is not compiled to closures');

  const engineOp = () => validatePayload(gate, PAYLOAD);
  const handOp = () => hand(PAYLOAD);
  // Warm-up: both sides optimized before the first timed round.
  await timeRound(engineOp, roundMs);
  await timeRound(handOp, roundMs);
  const engine: number[] = [];
  const handTimes: number[] = [];
  for (let r = 0; r < rounds; r += 1) {
    engine.push(await timeRound(engineOp, roundMs));
    handTimes.push(await timeRound(handOp, roundMs));
  }
  const engineUs = median(engine);
  const handWrittenUs = median(handTimes);
  return { engineUs, handWrittenUs, ratio: engineUs / handWrittenUs };
}

if (require.main === module) {
  measureEngine().then(
    (m) => {
      process.stdout.write(
        [
          'Validation engine benchmark (issue 17, goal 3a): gate with 20 fields and 5 rules, one core, same process',
          `  engine (schema layer + compiled rules) : ${m.engineUs.toFixed(2)} CPU µs/validation`,
          `  hand-written (ajv + 5 JS closures)     : ${m.handWrittenUs.toFixed(2)} CPU µs/validation`,
          `  ratio                                  : ${m.ratio.toFixed(2)}× (goal ≤ 3×: ${m.ratio <= 3 ? 'met' : 'not met'})`,
        ].join('\n') + '\n',
      );
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
