import pino from 'pino';

/**
 * A structured logger: one JSON line per event, debug and info on stdout, warn and error on stderr.
 * Every line carries the request id when there is one, so a 500's details can be found from its
 * response. pino writes the lines; the shape is the service's own: `level` as its name, `time` as
 * ISO 8601, no pid or hostname, and an Error anywhere in the fields as `{ name, message, stack }`.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}): Logger {
  // The process streams themselves (not pino's own file writer): each line goes through their
  // `write`, so a test that captures process.stdout.write sees the log as it did before pino.
  // `dedupe`: a line goes to the one stream with the highest level it reaches (warn to stderr only).
  const streams = pino.multistream(
    [
      { level: 'debug', stream: process.stdout },
      { level: 'warn', stream: process.stderr },
    ],
    { dedupe: true },
  );
  const root = pino(
    {
      level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      // pino's `err` serializer writes `type` for `name`: errors are given their shape below instead.
      serializers: { err: (err: unknown) => err },
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => withPlainErrors(fields) as Record<string, unknown>,
      },
    },
    streams,
  );
  return wrap(root, base);
}

/**
 * A child's fields are merged here rather than as pino bindings: a field given again (a child's
 * `requestId`, then the call's) is written once, the call's value winning, as before pino.
 */
function wrap(p: pino.Logger, base: Record<string, unknown>): Logger {
  return {
    debug: (msg, fields) => p.debug({ ...base, ...fields }, msg),
    info: (msg, fields) => p.info({ ...base, ...fields }, msg),
    warn: (msg, fields) => p.warn({ ...base, ...fields }, msg),
    error: (msg, fields) => p.error({ ...base, ...fields }, msg),
    child: (fields) => wrap(p, { ...base, ...fields }),
  };
}

/** Errors (at any depth of plain objects and arrays) as `{ name, message, stack }`: JSON writes an Error as `{}`. */
function withPlainErrors(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map(withPlainErrors);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPlainErrors(v)]));
  }
  return value;
}
