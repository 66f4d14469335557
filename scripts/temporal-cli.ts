import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { homedir } from 'node:os';

/** Where .ci/run and scripts/install-tools.sh put the Temporal CLI they build. */
export const TOOLS_DIR = process.env.FORMWORK_TOOLS_DIR ?? join(homedir(), '.cache', 'formwork', 'bin');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Temporal CLI to run the dev server with: TEMPORAL_CLI_PATH, else the one our install
 * script caches, else `temporal` on PATH. Undefined lets the SDK download one (not possible
 * on machines without internet; scripts/install-tools.sh builds it instead).
 */
export function findTemporalCli(explicit?: string): string | undefined {
  if (explicit) return explicit;
  const cached = join(TOOLS_DIR, 'temporal');
  if (executable(cached)) return cached;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'temporal');
    if (dir && executable(candidate)) return candidate;
  }
  return undefined;
}
