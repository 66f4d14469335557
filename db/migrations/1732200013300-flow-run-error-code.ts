import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The catalogued code of a Flow run's failure (`errorCode`, docs/flow.md "Run statuses"): a render
 * refused by the checks at acceptance or failed by a limit keeps its own code (ERR_LIMIT_007,
 * ERR_OUTBOUND_001, …) next to the words in `error`. Runs from before have none.
 */
export class FlowRunErrorCode1732200013300 implements MigrationInterface {
  name = 'FlowRunErrorCode1732200013300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE flow_runs ADD COLUMN error_code text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE flow_runs DROP COLUMN IF EXISTS error_code`);
  }
}
