import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent tasks wake their waiters (docs/reporting.md "Agents"): a queued task notifies
 * `formwork_agent_tasks` with `q:<agentId>` (a waiting long poll of that agent leases it at once) and a
 * task that ends notifies `d:<taskId>` (a request waiting for a test, schema or preview answers at once),
 * from whichever process wrote the row. Polling stays as the fallback. The datasource's agent becomes a
 * foreign key (NO ACTION, checked at the end of the statement, so deleting a project removes both).
 */
export class ReportingAgentSignals1732200011000 implements MigrationInterface {
  name = 'ReportingAgentSignals1732200011000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION reporting_agent_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' AND NEW.status = 'queued' THEN
          PERFORM pg_notify('formwork_agent_tasks', 'q:' || NEW.agent_id::text);
        ELSIF TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status
              AND NEW.status IN ('completed', 'failed', 'cancelled', 'expired') THEN
          PERFORM pg_notify('formwork_agent_tasks', 'd:' || NEW.id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER reporting_agent_task_notify AFTER INSERT OR UPDATE OF status ON reporting_agent_tasks
        FOR EACH ROW EXECUTE FUNCTION reporting_agent_task_notify()`);
    await q.query(`ALTER TABLE reporting_datasources ADD CONSTRAINT reporting_datasources_agent_fk FOREIGN KEY (agent_id) REFERENCES reporting_agents(id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_datasources DROP CONSTRAINT IF EXISTS reporting_datasources_agent_fk`);
    await q.query(`DROP TRIGGER IF EXISTS reporting_agent_task_notify ON reporting_agent_tasks`);
    await q.query(`DROP FUNCTION IF EXISTS reporting_agent_task_notify()`);
  }
}
