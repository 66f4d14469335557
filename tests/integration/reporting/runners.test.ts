import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createConnection, type Connection } from 'mysql2';
import { Client } from 'pg';
import { createOutboundGuard } from '../../../adapters/http/outbound';
import { createQueryRunner } from '../../../adapters/query-runners/runners';
import type {
  CompiledQuery,
  DatasourceKind,
  QueryLimits,
  QueryRunner,
  SqlConnectionConfig,
} from '../../../domain/reporting/query-runner';
import { createTestDatabase } from '../../support/database';
import { waitFor } from '../../support/wait';

/**
 * The direct runners against the machine's PostgreSQL and MariaDB: every write form is refused and
 * leaves the rows as they were; timeouts, row and byte caps; parameters stay values; discovery.
 */

const LIMITS: QueryLimits = { timeoutMs: 10_000, maxRows: 1_000, maxBytes: 1_000_000, onRowLimit: 'fail' };
const allowLoopback = createOutboundGuard(['127.0.0.1']);

function collector() {
  const lines: string[] = [];
  return { lines, sink: { write: async (line: string) => void lines.push(line) }, rows: () => lines.map((l) => JSON.parse(l)) };
}

async function refusal(runner: QueryRunner, query: CompiledQuery, limits: QueryLimits = LIMITS) {
  const out = collector();
  const error = await runner.run(query, limits, out.sink).then(
    () => undefined,
    (err: unknown) => err as { code?: string; relatedInfo?: Record<string, unknown> },
  );
  return error;
}

interface Target {
  kind: DatasourceKind;
  config: SqlConnectionConfig;
  /** `$1` (postgres) or `?` (mysql). */
  param: (n: number) => string;
  admin: (sql: string) => Promise<unknown[]>;
  writes: Array<[label: string, text: string, code: string]>;
  sleep: (seconds: number) => string;
}

let pg: Target;
let my: Target;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  // PostgreSQL: a throwaway database with a table, a writing procedure and a writing function.
  const db = await createTestDatabase({ empty: true });
  const url = new URL(db.url);
  const pgClient = new Client({ connectionString: db.url });
  await pgClient.connect();
  cleanups.push(async () => {
    await pgClient.end();
    await db.drop();
  });
  await pgClient.query(`
    CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, amount numeric(10,2), big bigint, day date, at timestamptz);
    INSERT INTO t SELECT i, 'row ' || i, i * 1.5, 9007199254740993 + i, DATE '2026-01-01' + i, TIMESTAMPTZ '2026-01-01T00:00:00Z'
      FROM generate_series(1, 5) AS i;
    CREATE VIEW v AS SELECT id, name FROM t;
    CREATE PROCEDURE p() LANGUAGE sql AS $$ INSERT INTO t (id, name) VALUES (50, 'procedure') $$;
    CREATE FUNCTION w() RETURNS int LANGUAGE sql AS $$ INSERT INTO t (id, name) VALUES (51, 'function') RETURNING id $$;`);
  pg = {
    kind: 'postgres',
    config: { host: '127.0.0.1', port: Number(url.port || 5432), database: url.pathname.slice(1), user: 'postgres', ssl: 'disable' },
    param: (n) => `$${n}`,
    admin: async (sql) => (await pgClient.query(sql)).rows,
    sleep: (s) => `SELECT pg_sleep(${s})`,
    writes: [
      ['INSERT', "INSERT INTO t (id, name) VALUES (99, 'x')", 'ERR_QRY_009'],
      ['SELECT 1; COMMIT; INSERT', "SELECT 1; COMMIT; INSERT INTO t (id, name) VALUES (98, 'x')", 'ERR_QRY_006'],
      ['SET TRANSACTION READ WRITE then INSERT', "SET TRANSACTION READ WRITE; INSERT INTO t (id, name) VALUES (97, 'x')", 'ERR_QRY_009'],
      ['SET TRANSACTION READ WRITE', 'SET TRANSACTION READ WRITE', 'ERR_QRY_009'],
      ['COPY FROM', 'COPY t FROM STDIN', 'ERR_QRY_009'],
      ['COPY TO STDOUT', 'COPY t TO STDOUT', 'ERR_QRY_009'],
      ['COPY TO a server file', "COPY t TO '/tmp/formwork-runner-copy.txt'", 'ERR_QRY_009'],
      ['SELECT INTO', 'SELECT * INTO newtable FROM t', 'ERR_QRY_009'],
      ['CALL', 'CALL p()', 'ERR_QRY_009'],
      ['a writing function', 'SELECT w()', 'ERR_QRY_009'],
      ['EXPLAIN ANALYZE of a writing function', 'EXPLAIN ANALYZE SELECT w()', 'ERR_QRY_009'],
      ['writable CTE', "WITH x AS (INSERT INTO t (id, name) VALUES (96, 'x') RETURNING *) SELECT * FROM x", 'ERR_QRY_009'],
      ['DROP', 'DROP TABLE t', 'ERR_QRY_009'],
      ['DELETE', 'DELETE FROM t', 'ERR_QRY_009'],
    ],
  };

  // MariaDB: the same table and a writing procedure in a throwaway database.
  const name = `formwork_test_${randomBytes(6).toString('hex')}`;
  const myConn: Connection = createConnection({ host: '127.0.0.1', port: 3306, user: 'root', multipleStatements: false });
  const myQuery = (sql: string) =>
    new Promise<unknown[]>((resolve, reject) =>
      myConn.query(sql, (err, rows) => (err ? reject(err) : resolve(rows as unknown[]))),
    );
  await myQuery(`CREATE DATABASE ${name}`);
  cleanups.push(async () => {
    await myQuery(`DROP DATABASE IF EXISTS ${name}`);
    await new Promise<void>((resolve) => myConn.end(() => resolve()));
  });
  await myQuery(`USE ${name}`);
  await myQuery(
    'CREATE TABLE t (id int PRIMARY KEY, name varchar(50) NOT NULL, amount decimal(10,2), big bigint, day date, at datetime)',
  );
  await myQuery(`INSERT INTO t VALUES
    (1, 'row 1', 1.5, 9007199254740994, '2026-01-02', '2026-01-01 00:00:00'),
    (2, 'row 2', 3.0, 9007199254740995, '2026-01-03', '2026-01-01 00:00:00'),
    (3, 'row 3', 4.5, 9007199254740996, '2026-01-04', '2026-01-01 00:00:00'),
    (4, 'row 4', 6.0, 9007199254740997, '2026-01-05', '2026-01-01 00:00:00'),
    (5, 'row 5', 7.5, 9007199254740998, '2026-01-06', '2026-01-01 00:00:00')`);
  await myQuery('CREATE VIEW v AS SELECT id, name FROM t');
  await myQuery("CREATE PROCEDURE p() BEGIN INSERT INTO t (id, name) VALUES (50, 'procedure'); END");
  my = {
    kind: 'mysql',
    config: { host: '127.0.0.1', port: 3306, database: name, user: 'root', ssl: 'disable' },
    param: () => '?',
    admin: myQuery,
    sleep: (s) => `SELECT SLEEP(${s})`,
    writes: [
      ['INSERT', "INSERT INTO t (id, name) VALUES (99, 'x')", 'ERR_QRY_009'],
      ['SELECT 1; COMMIT; INSERT', "SELECT 1; COMMIT; INSERT INTO t (id, name) VALUES (98, 'x')", 'ERR_QRY_006'],
      ['SET TRANSACTION READ WRITE then INSERT', "SET TRANSACTION READ WRITE; INSERT INTO t (id, name) VALUES (97, 'x')", 'ERR_QRY_006'],
      ['SET TRANSACTION READ WRITE', 'SET TRANSACTION READ WRITE', 'ERR_QRY_009'],
      ['SELECT INTO OUTFILE', "SELECT * FROM t INTO OUTFILE '/tmp/formwork-runner-outfile.txt'", 'ERR_QRY_009'],
      ['SELECT INTO @var', 'SELECT id FROM t LIMIT 1 INTO @v', 'ERR_QRY_009'],
      ['CALL', 'CALL p()', 'ERR_QRY_009'],
      ['INSERT ... WITH (writable CTE form)', "INSERT INTO t (id, name) WITH x AS (SELECT 96, 'x') SELECT * FROM x", 'ERR_QRY_009'],
      ['DELETE ... RETURNING', 'DELETE FROM t RETURNING id', 'ERR_QRY_009'],
      ['DROP', 'DROP TABLE t', 'ERR_QRY_009'],
      ['SET GLOBAL', 'SET GLOBAL max_connections = 500', 'ERR_QRY_009'],
    ],
  };
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const targets = () => [pg, my];

describe.each([['postgres'], ['mysql']])('%s runner', (kind) => {
  const target = () => targets().find((t) => t.kind === kind)!;
  let runner: QueryRunner;
  beforeAll(() => {
    runner = createQueryRunner({ kind: target().kind, config: target().config, secrets: {}, guard: allowLoopback });
  });
  afterAll(() => runner.close());

  it('streams the rows as NDJSON: numbers stay numbers, big and exact numbers as the driver gives them', async () => {
    const out = collector();
    const summary = await runner.run(
      { text: `SELECT id, name, amount, big, day, at FROM t WHERE id <= ${target().param(1)} ORDER BY id`, values: [2] },
      LIMITS,
      out.sink,
    );
    expect(summary).toMatchObject({ rowCount: 2, truncated: false, bytes: out.lines.join('').length });
    expect(summary.columns.map((c) => c.name)).toEqual(['id', 'name', 'amount', 'big', 'day', 'at']);
    const rows = out.rows();
    expect(rows[0]).toEqual({
      id: 1,
      name: 'row 1',
      amount: '1.50',
      big: '9007199254740994',
      day: '2026-01-02',
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(rows[1].id).toBe(2);
  });

  it('refuses every write form and leaves the rows unchanged', async () => {
    const before = await target().admin('SELECT * FROM t ORDER BY id');
    for (const [label, text, code] of target().writes) {
      const error = await refusal(runner, { text, values: [] });
      expect({ label, code: error?.code }).toEqual({ label, code });
    }
    expect(await target().admin('SELECT * FROM t ORDER BY id')).toEqual(before);
    expect(before).toHaveLength(5);
    // Both servers run on this machine: the file-writing forms wrote nothing.
    expect(existsSync('/tmp/formwork-runner-copy.txt') || existsSync('/tmp/formwork-runner-outfile.txt')).toBe(false);
  });

  it('runs the other reads: VALUES, WITH, SHOW and EXPLAIN', async () => {
    const reads =
      kind === 'postgres'
        ? ['VALUES (1), (2)', 'WITH x AS (SELECT id FROM t) SELECT * FROM x -- a trailing comment', 'SHOW server_version', 'EXPLAIN SELECT * FROM t']
        : ['VALUES (1), (2)', 'WITH x AS (SELECT id FROM t) SELECT * FROM x -- a trailing comment', 'SHOW TABLES', 'EXPLAIN SELECT * FROM t'];
    for (const text of reads) {
      const out = collector();
      const summary = await runner.run({ text, values: [] }, LIMITS, out.sink);
      expect({ text, rows: summary.rowCount > 0 }).toEqual({ text, rows: true });
    }
  });

  it('ends a statement past its timeout with ERR_QRY_007', async () => {
    // A statement of 30 s: ended by the timeout, the error comes long before it could have finished.
    const started = Date.now();
    const error = await refusal(runner, { text: target().sleep(30), values: [] }, { ...LIMITS, timeoutMs: 1_000 });
    expect(error?.code).toBe('ERR_QRY_007');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('applies maxRows: fail answers ERR_QRY_008, truncate keeps maxRows rows', async () => {
    const text = 'SELECT id FROM t ORDER BY id';
    const error = await refusal(runner, { text, values: [] }, { ...LIMITS, maxRows: 3 });
    expect(error).toMatchObject({ code: 'ERR_QRY_008', relatedInfo: { limit: 3 } });

    const out = collector();
    const summary = await runner.run({ text, values: [] }, { ...LIMITS, maxRows: 3, onRowLimit: 'truncate' }, out.sink);
    expect(summary).toMatchObject({ rowCount: 3, truncated: true });
    expect(out.rows()).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);

    const exact = collector();
    const all = await runner.run({ text, values: [] }, { ...LIMITS, maxRows: 5 }, exact.sink);
    expect(all).toMatchObject({ rowCount: 5, truncated: false });
  });

  it('reads a result larger than one batch up to maxRows + 1 rows', async () => {
    const text =
      kind === 'postgres'
        ? 'SELECT n FROM generate_series(1, 1200) AS n'
        : `WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 40)
           SELECT n FROM (SELECT (a.n - 1) * 40 + b.n AS n FROM s AS a CROSS JOIN s AS b) AS x WHERE n <= 1200 ORDER BY n`;
    const out = collector();
    const summary = await runner.run({ text, values: [] }, { ...LIMITS, maxRows: 1_100, onRowLimit: 'truncate' }, out.sink);
    expect(summary).toMatchObject({ rowCount: 1_100, truncated: true });
    // mysql: the expression is a BIGINT, given as a string like every BIGINT.
    expect(Number(out.rows().at(-1).n)).toBe(1_100);
    const whole = await runner.run({ text, values: [] }, { ...LIMITS, maxRows: 1_200 }, collector().sink);
    expect(whole).toMatchObject({ rowCount: 1_200, truncated: false });
  });

  it('stops a running statement when the caller aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    // A statement of 30 s: stopped, it ends long before it could have finished.
    const text = `${target().sleep(30)} AS aborted_probe`;
    const running = runner.run({ text, values: [] }, LIMITS, collector().sink, controller.signal);
    setTimeout(() => controller.abort(new Error('cancelled by the test')), 300);
    await expect(running).rejects.toThrow('cancelled by the test');
    expect(Date.now() - started).toBeLessThan(15_000);
    // The server stops the statement too, well before its 30 seconds.
    const activity =
      kind === 'postgres'
        ? "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%AS aborted_probe%' AND pid <> pg_backend_pid()"
        : "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE '%AS aborted_probe%' AND ID <> CONNECTION_ID()";
    await waitFor(async () => Number(((await target().admin(activity)) as Array<{ n: number }>)[0].n) === 0, {
      timeoutMs: 15_000,
      what: 'the aborted statement to end on the server',
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    // The runner still works afterwards.
    await expect(runner.run({ text: 'SELECT 1 AS one', values: [] }, LIMITS, collector().sink)).resolves.toMatchObject({ rowCount: 1 });
  });

  it('answers ERR_QRY_010 once the NDJSON passes maxBytes', async () => {
    const error = await refusal(runner, { text: 'SELECT id, name FROM t ORDER BY id', values: [] }, { ...LIMITS, maxBytes: 60 });
    expect(error?.code).toBe('ERR_QRY_010');
  });

  it('keeps a parameter value a value', async () => {
    for (const value of ['1; DROP TABLE t', "' OR 1=1 --"]) {
      const out = collector();
      const summary = await runner.run(
        { text: `SELECT id FROM t WHERE name = ${target().param(1)}`, values: [value] },
        LIMITS,
        out.sink,
      );
      expect(summary.rowCount).toBe(0);
    }
    expect(await target().admin('SELECT COUNT(*) AS n FROM t')).toEqual([{ n: kind === 'postgres' ? '5' : 5 }]);
  });

  it('discovers the table, the view and their columns', async () => {
    const schema = await runner.discoverSchema();
    expect(schema.truncated).toBe(false);
    const table = schema.tables.find((t) => t.name === 't')!;
    expect(table.type).toBe('table');
    expect(table.columns.map((c) => c.name)).toEqual(['id', 'name', 'amount', 'big', 'day', 'at']);
    expect(table.columns[0]).toMatchObject({ nullable: false, ordinal: 1 });
    expect(table.columns[2]).toMatchObject({ nullable: true });
    expect(schema.tables.find((t) => t.name === 'v')?.type).toBe('view');
  });

  it('tests the connection: server version and latency', async () => {
    const result = await runner.test();
    expect(result.serverVersion).toMatch(kind === 'postgres' ? /PostgreSQL/ : /MariaDB|^\d/);
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('answers ERR_QRY_006 with the driver code when the database cannot be reached or does not exist', async () => {
    const closedPort = createQueryRunner({ kind: target().kind, config: { ...target().config, port: 1 }, secrets: {}, guard: allowLoopback });
    await expect(closedPort.test()).rejects.toMatchObject({ code: 'ERR_QRY_006', relatedInfo: { dbCode: 'ECONNREFUSED' } });
    const missing = createQueryRunner({
      kind: target().kind,
      config: { ...target().config, database: 'formwork_no_such_database' },
      secrets: {},
      guard: allowLoopback,
    });
    await expect(missing.test()).rejects.toMatchObject({
      code: 'ERR_QRY_006',
      relatedInfo: { dbCode: kind === 'postgres' ? '3D000' : '1049' },
    });
  });

  it('refuses 127.0.0.1 unless OUTBOUND_ALLOWLIST allows it', async () => {
    const refused = createQueryRunner({ kind: target().kind, config: target().config, secrets: {}, guard: createOutboundGuard([]) });
    await expect(refused.test()).rejects.toMatchObject({ code: 'ERR_OUTBOUND_001' });
    await expect(refusal(refused, { text: 'SELECT 1', values: [] })).resolves.toMatchObject({ code: 'ERR_OUTBOUND_001' });
    const named = createQueryRunner({
      kind: target().kind,
      config: { ...target().config, host: 'localhost' },
      secrets: {},
      guard: createOutboundGuard([]),
    });
    await expect(named.discoverSchema()).rejects.toMatchObject({ code: 'ERR_OUTBOUND_001' });
  });
});

it('refuses kinds without a direct runner (sqlite runs only through an agent)', () => {
  expect(() =>
    createQueryRunner({ kind: 'sqlite', config: pg.config, secrets: {}, guard: allowLoopback }),
  ).toThrow(expect.objectContaining({ code: 'ERR_DS_002' }));
});
