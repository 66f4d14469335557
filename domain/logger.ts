/**
 * A small structured logger: one JSON line per event on stdout/stderr. Every line carries the
 * request id when there is one, so a 500's details can be found from its response.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}): Logger {
  const min = ORDER.indexOf(level);
  const write = (lvl: LogLevel) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER.indexOf(lvl) < min) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields }, errorReplacer);
    (lvl === 'error' || lvl === 'warn' ? process.stderr : process.stdout).write(line + '\n');
  };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
