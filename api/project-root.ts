import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The nearest folder at or above this file that holds `relative` (a path of the repository, such as
 * `docs/examples/fonts`): the project's root, found whether the code runs from the sources or from dist/.
 */
export function projectRootHolding(relative: string): string | undefined {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, relative))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
