import { ConfigError } from '../domain/config';

/**
 * Runs a process role: a bad configuration stops it with one line naming the variable; SIGINT and
 * SIGTERM run the role's shutdown once (a second signal forces the exit).
 */
export function runRole(name: string, start: () => Promise<() => Promise<void>>): void {
  start().then(
    (stop) => {
      let stopping = false;
      const onSignal = (signal: string) => {
        if (stopping) process.exit(130);
        stopping = true;
        process.stdout.write(`\n${name}: ${signal} received, shutting down…\n`);
        stop().then(
          () => process.exit(0),
          (err) => {
            process.stderr.write(`${name}: shutdown failed: ${err?.stack ?? err}\n`);
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', () => onSignal('SIGINT'));
      process.on('SIGTERM', () => onSignal('SIGTERM'));
    },
    (err) => {
      if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
      else process.stderr.write(`${name} failed to start: ${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
