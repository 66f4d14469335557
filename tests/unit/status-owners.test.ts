import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * A static guard for "one owner per status column" (docs/architecture.md, "State machines"): no
 * file but the owner sets `status` on an owned table, by raw SQL (`UPDATE … SET status =`,
 * `INSERT INTO … (…, status, …)`) or TypeORM (`insert`, `update`, `save`, `upsert` of the table's
 * entity). Cheap and textual: it reads the source, it does not run it.
 */

const root = join(__dirname, '../..');

/** Owned table → its owner file and its entity class (null: written by raw SQL only). */
const OWNERS: Record<string, { owner: string; entity: string | null }> = {
  flow_runs: { owner: 'db/flow/run-state.ts', entity: 'RunEntity' },
  flow_approvals: { owner: 'db/flow/approval-state.ts', entity: 'ApprovalEntity' },
  document_jobs: { owner: 'db/documents/job-state.ts', entity: 'DocumentJobEntity' },
  document_batches: { owner: 'db/documents/batch-state.ts', entity: 'DocumentBatchEntity' },
  reporting_runs: { owner: 'db/reporting/run-state.ts', entity: 'ReportRunEntity' },
  reporting_job_runs: { owner: 'db/reporting/job-run-state.ts', entity: 'ReportJobRunEntity' },
  reporting_deliveries: { owner: 'db/deliveries/delivery-state.ts', entity: 'ReportDeliveryEntity' },
  webhook_deliveries: { owner: 'db/deliveries/delivery-state.ts', entity: 'WebhookDeliveryEntity' },
  reporting_agent_tasks: { owner: 'db/reporting/agent-task-state.ts', entity: 'AgentTaskEntity' },
};

/** Owners of several tables (the one delivery recorder) name the table at run time, among their own. */
const SHARED_OWNERS = new Set(Object.values(OWNERS).map((o) => o.owner).filter((owner, i, all) => all.indexOf(owner) !== i));

/** The server's code: migrations aside (one may backfill a column), packages and builds too. */
const LAYERS = ['api', 'activities', 'db', 'platform', 'workflows', 'agent', 'worker', 'domain'];
const SKIPPED = /^(?:node_modules|dist|migrations)$/;

function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.test(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** `status` assigned at the top level of a SET list (not `delivery_status`, not `WHEN status =`). */
const SETS_STATUS = /(?:\bSET|,)\s*status\s*=/i;

/** Every status write in a source text: the table it writes (`?` when the table is named at run time). */
function statusWrites(text: string): string[] {
  const tables: string[] = [];
  // The SET list runs to the statement's WHERE, FROM, RETURNING or end of its string.
  for (const m of text.matchAll(/\bUPDATE\s+(\$\{[^}]*\}|\w+)(?:\s+(?!SET\b)\w+)?\s+SET\b([\s\S]*?)(?=\bWHERE\b|\bFROM\b|\bRETURNING\b|`|$)/gi)) {
    if (SETS_STATUS.test(`SET ${m[2]}`)) tables.push(m[1].startsWith('${') ? '?' : m[1].toLowerCase());
  }
  for (const m of text.matchAll(/\bINSERT\s+INTO\s+(\$\{[^}]*\}|\w+)\s*\(([\s\S]*?)\)\s*(?=VALUES\b|SELECT\b)/gi)) {
    if (/(?:^|,)\s*status\s*(?=,|$)/i.test(m[2])) tables.push(m[1].startsWith('${') ? '?' : m[1].toLowerCase());
  }
  for (const [table, { entity }] of Object.entries(OWNERS)) {
    if (!entity) continue;
    const repository = new RegExp(`getRepository\\(${entity}\\)\\s*\\.\\s*(?:insert|update|save|upsert)\\(`);
    const manager = new RegExp(`\\.(?:insert|update|save|upsert)\\(\\s*${entity}\\b`);
    if (repository.test(text) || manager.test(text)) tables.push(table);
  }
  return tables;
}

describe('one owner per status column (docs/architecture.md, "State machines")', () => {
  const files = LAYERS.flatMap((layer) => sources(join(root, layer))).map((path) => ({ file: relative(root, path), text: readFileSync(path, 'utf8') }));

  it('reads the server source and finds every owner file', () => {
    expect(files.length).toBeGreaterThan(100);
    for (const { owner } of Object.values(OWNERS)) expect(files.map((f) => f.file)).toContain(owner);
  });

  it('sets status on an owned table only in its owner file', () => {
    const strays = files.flatMap(({ file, text }) =>
      statusWrites(text)
        .filter((table) => (table === '?' && !SHARED_OWNERS.has(file)) || (table in OWNERS && OWNERS[table].owner !== file))
        .map((table) => `${file} writes ${table === '?' ? 'the status of a table named at run time' : `${table}.status (owner: ${OWNERS[table].owner})`}`),
    );
    expect(strays).toEqual([]);
  });

  it('finds a write in each owner (the guard sees what it guards)', () => {
    for (const [table, { owner }] of Object.entries(OWNERS)) {
      const writes = statusWrites(files.find((f) => f.file === owner)!.text);
      expect({ owner, table, writes: writes.includes(table) || (SHARED_OWNERS.has(owner) && writes.includes('?')) }).toEqual({ owner, table, writes: true });
    }
  });

  it('recognises the shapes of a status write, and not a delivery_status or a WHERE', () => {
    expect(statusWrites("UPDATE flow_runs SET status = 'failed' WHERE id = $1")).toEqual(['flow_runs']);
    expect(statusWrites('UPDATE reporting_runs r SET updated_at = now(),\n status = $2 FROM x WHERE r.id = x.id')).toEqual(['reporting_runs']);
    expect(statusWrites("UPDATE ${table} SET status = 'x' WHERE id = $1")).toEqual(['?']);
    expect(statusWrites('INSERT INTO document_jobs (id, status, project_id) VALUES ($1, $2, $3)')).toEqual(['document_jobs']);
    expect(statusWrites('db.getRepository(ReportRunEntity).update({ id }, { status })')).toEqual(['reporting_runs']);
    expect(statusWrites('m.save(WebhookDeliveryEntity, row)')).toEqual(['webhook_deliveries']);
    expect(statusWrites("UPDATE reporting_runs SET delivery_status = 'failed' WHERE status = 'delivering'")).toEqual([]);
    expect(statusWrites("UPDATE flow_runs SET error = CASE WHEN status = 'failed' THEN $2 END WHERE id = $1")).toEqual([]);
    expect(statusWrites('INSERT INTO reporting_run_outputs (id, run_id, format) VALUES ($1, $2, $3)')).toEqual([]);
  });
});
