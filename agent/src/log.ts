/**
 * The agent's log: one JSON object per line on stdout (`{"time", "level", "event", ...}`), for
 * journald, Docker or any log shipper. Callers pass ids, counts, codes and error messages the
 * runners produced: never a token, a password or a row.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

export interface Log {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

export function createLog(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Log {
  const at = (lineLevel: LogLevel) => (event: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[lineLevel] < ORDER[level]) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lineLevel, event, ...fields })}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
