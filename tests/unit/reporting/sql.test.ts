import { AppError } from '../../../domain/errors';
import type { ParameterDef } from '../../../domain/reporting/parameters';
import { checkQueryText, compileQuery, MAX_QUERY_TEXT, type QueryIssueCode, type SqlDialect } from '../../../domain/reporting/sql';
import { cpuMsOf } from '../../support/cpu-time';

const defs: ParameterDef[] = [
  { name: 'status', type: 'string' },
  { name: 'minTotal', type: 'number' },
  { name: 'ids', type: 'integer', multiple: true },
  { name: 'region', type: 'string', required: true },
];

const codes = (text: string, dialect: SqlDialect, parameterDefs: ParameterDef[] = defs): QueryIssueCode[] =>
  checkQueryText(text, dialect, parameterDefs).map((i) => i.code);

function thrown(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('placeholders compile to bind parameters', () => {
  it('numbers postgres placeholders in order and reuses a repeated name', () => {
    const q = compileQuery(
      'SELECT * FROM orders WHERE status = {{status}} AND total > {{ minTotal }} OR backup_status = {{  status  }}',
      'postgres',
      defs,
      { status: 'open', minTotal: 10 },
    );
    expect(q).toEqual({ text: 'SELECT * FROM orders WHERE status = $1 AND total > $2 OR backup_status = $1', values: ['open', 10] });
  });

  it('gives mysql one ? and one value per occurrence', () => {
    const q = compileQuery('SELECT * FROM orders WHERE status = {{status}} OR alt = {{status}}', 'mysql', defs, { status: 'open' });
    expect(q).toEqual({ text: 'SELECT * FROM orders WHERE status = ? OR alt = ?', values: ['open', 'open'] });
  });

  it('expands a multiple parameter to one marker per value', () => {
    const text = 'SELECT * FROM t WHERE region = {{region}} AND id IN ({{ids}}) AND x = {{minTotal}}';
    expect(compileQuery(text, 'postgres', defs, { region: 'eu', ids: [3, 4, 5], minTotal: 1 })).toEqual({
      text: 'SELECT * FROM t WHERE region = $1 AND id IN ($2, $3, $4) AND x = $5',
      values: ['eu', 3, 4, 5, 1],
    });
    expect(compileQuery(text, 'mysql', defs, { region: 'eu', ids: [3, 4, 5], minTotal: 1 })).toEqual({
      text: 'SELECT * FROM t WHERE region = ? AND id IN (?, ?, ?) AND x = ?',
      values: ['eu', 3, 4, 5, 1],
    });
  });

  it('refuses an empty list outside an optional clause and a missing required value', () => {
    const empty = thrown(() => compileQuery('SELECT 1 FROM t WHERE id IN ({{ids}})', 'postgres', defs, { ids: [] }));
    expect(empty.code).toBe('ERR_RPT_007');
    expect(empty.relatedInfo).toEqual({ field: 'ids' });
    const missing = thrown(() => compileQuery('SELECT 1 FROM t WHERE r = {{region}}', 'mysql', defs, {}));
    expect(missing.code).toBe('ERR_RPT_007');
    expect(missing.relatedInfo).toEqual({ field: 'region' });
  });

  it('binds null for an optional single parameter without a value', () => {
    expect(compileQuery('SELECT {{status}}', 'postgres', defs, {})).toEqual({ text: 'SELECT $1', values: [null] });
  });

  it('keeps an injection attempt in a value a value: the text holds only markers', () => {
    const attack = "x'; DROP TABLE orders; --";
    for (const dialect of ['postgres', 'mysql'] as const) {
      const q = compileQuery('SELECT * FROM orders WHERE status = {{status}}', dialect, defs, { status: attack });
      expect(q.text).not.toContain('DROP');
      expect(q.text).toBe(`SELECT * FROM orders WHERE status = ${dialect === 'postgres' ? '$1' : '?'}`);
      expect(q.values).toEqual([attack]);
    }
  });

  it('knows the built-ins and refuses unknown names', () => {
    expect(codes('SELECT {{today}}, {{now}}, {{scheduledFor}}', 'postgres')).toEqual([]);
    expect(codes('SELECT {{nope}}', 'postgres')).toEqual(['UNKNOWN_PARAMETER']);
    expect(thrown(() => compileQuery('SELECT {{nope}}', 'mysql', defs, {})).code).toBe('ERR_QRY_002');
  });

  it('refuses malformed placeholders and hand-written bind markers', () => {
    expect(codes('SELECT {{ a.b }}', 'postgres')).toEqual(['INVALID_PLACEHOLDER']);
    expect(codes('SELECT {{ 1 }}', 'mysql')).toEqual(['INVALID_PLACEHOLDER']);
    expect(codes('SELECT * FROM t WHERE id = $1', 'postgres')).toEqual(['BIND_MARKER']);
    expect(codes('SELECT * FROM t WHERE id = ?', 'mysql')).toEqual(['BIND_MARKER']);
    // ? is a jsonb operator in postgres; $ inside a postgres identifier is part of it.
    expect(codes("SELECT doc ? 'k', a$b FROM t", 'postgres')).toEqual([]);
  });

  it('never lets a marker or a dropped clause fuse with its neighbours', () => {
    const pg = (text: string, values: Record<string, unknown> = { status: 's' }) => compileQuery(text, 'postgres', defs, values as never).text;
    // x$1 would be an identifier, $1 1 a number after a parameter, $$1 a dollar quote.
    expect(pg('SELECT x{{status}}')).toBe('SELECT x $1');
    expect(pg('SELECT {{status}}1')).toBe('SELECT $1 1');
    expect(pg('SELECT 1 $ {{status}}')).toBe('SELECT 1 $ $1');
    // A dropped clause between - and - must not leave a comment; E next to a quote would become E'...'.
    expect(pg('SELECT 1 -[[ {{minTotal}} ]]- 2', {})).toBe('SELECT 1 - - 2');
    expect(pg("SELECT E[[{{minTotal}}]]'a\\'", {})).toBe("SELECT E 'a\\'");
    expect(compileQuery('SELECT {{status}}{{status}}', 'mysql', defs, { status: 's' }).text).toBe('SELECT ? ?');
    // Where nothing fuses, the text stays as written.
    expect(compileQuery('SELECT 5 --{{minTotal}}', 'mysql', defs, { minTotal: 1 }).text).toBe('SELECT 5 --?');
    expect(pg('SELECT ({{status}})')).toBe('SELECT ($1)');
  });

  it('cuts trailing semicolons and comments from the compiled text', () => {
    expect(compileQuery('SELECT 1 -- one\n ; -- done', 'postgres', defs, {}).text).toBe('SELECT 1');
    expect(compileQuery('SELECT 1;;', 'mysql', defs, {}).text).toBe('SELECT 1');
  });
});

describe('placeholders inside literals, quoted identifiers and comments are refused', () => {
  const pg: Array<[string, string]> = [
    ['single-quoted string', "SELECT '{{status}}'"],
    ["string with '' escape", "SELECT 'it''s {{status}}'"],
    ['E string with backslash escape', "SELECT E'a\\' {{status}}'"],
    ['double-quoted identifier', 'SELECT "{{status}}" FROM t'],
    ['dollar quote', 'SELECT $$ {{status}} $$'],
    ['tagged dollar quote', 'SELECT $fn$ $$ {{status}} $fn$'],
    ['line comment', 'SELECT 1 -- {{status}}\n'],
    ['block comment', 'SELECT 1 /* {{status}} */'],
    ['nested block comment', 'SELECT 1 /* outer /* inner */ {{status}} */'],
  ];
  it.each(pg)('postgres: %s', (_what, text) => {
    expect(codes(text, 'postgres')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    expect(thrown(() => compileQuery(text, 'postgres', defs, { status: 'x' })).code).toBe('ERR_QRY_002');
  });

  const my: Array<[string, string]> = [
    ['single-quoted string', "SELECT '{{status}}'"],
    ['backslash-escaped quote', "SELECT 'a\\' {{status}}'"],
    ['double-quoted string', 'SELECT "x {{status}}"'],
    ['back-quoted identifier', 'SELECT `{{status}}` FROM t'],
    ['-- comment', 'SELECT 1 -- {{status}}\n'],
    ['# comment', 'SELECT 1 # {{status}}\n'],
    ['block comment', 'SELECT 1 /* {{status}} */'],
  ];
  it.each(my)('mysql: %s', (_what, text) => {
    expect(codes(text, 'mysql')).toEqual(['PLACEHOLDER_IN_LITERAL']);
  });

  it('scans each dialect by its own rules', () => {
    // postgres does not nest-escape with backslashes in standard strings: the string ends at the second quote.
    expect(compileQuery("SELECT 'a\\', {{status}}", 'postgres', defs, { status: 's' }).text).toBe("SELECT 'a\\', $1");
    // a mysql comment does not nest: the placeholder after the first */ is code (postgres: still in the comment).
    expect(codes('SELECT 1 /* a /* b */ {{status}} */', 'mysql')).toEqual([]);
    expect(codes('SELECT 1 /* a /* b */ {{status}} */', 'postgres')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    // mysql: -- without a following space is two minus signs.
    expect(compileQuery('SELECT 5 --{{minTotal}}', 'mysql', defs, { minTotal: 2 })).toEqual({ text: 'SELECT 5 --?', values: [2] });
    // postgres: a $ tag must match exactly to close.
    expect(codes('SELECT $a$ $b$ {{status}} $a$', 'postgres')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    expect(compileQuery('SELECT $a$ x $a$, {{status}}', 'postgres', defs, { status: 's' }).text).toBe('SELECT $a$ x $a$, $1');
  });

  it('scans sqlite (agents only) by its rules: ? markers, no backslash escapes, quoted identifiers, -- comments', () => {
    // A backslash does not escape in sqlite: the string ends at the second quote and the placeholder after it binds.
    expect(compileQuery("SELECT 'a\\', {{status}}, {{status}}", 'sqlite', defs, { status: 's' })).toEqual({ text: "SELECT 'a\\', ?, ?", values: ['s', 's'] });
    expect(codes('SELECT "{{status}}" FROM t', 'sqlite')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    expect(codes('SELECT `{{status}}` FROM t', 'sqlite')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    expect(codes('SELECT 1 --{{status}}', 'sqlite')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    // # is no comment in sqlite, and /*! is an ordinary comment (no executable comments).
    expect(codes('SELECT 1 /*! {{status}} */', 'sqlite')).toEqual(['PLACEHOLDER_IN_LITERAL']);
    expect(codes("INSERT INTO t VALUES ('x')", 'sqlite')).toEqual(['NOT_A_READ']);
  });

  it('reports unterminated literals and comments', () => {
    expect(codes("SELECT 'abc", 'postgres')).toEqual(['UNTERMINATED']);
    expect(codes('SELECT "abc', 'postgres')).toEqual(['UNTERMINATED']);
    expect(codes('SELECT $x$ abc', 'postgres')).toEqual(['UNTERMINATED']);
    expect(codes('SELECT /* /* */', 'postgres')).toEqual(['UNTERMINATED']);
    expect(codes('SELECT `abc', 'mysql')).toEqual(['UNTERMINATED']);
  });

  it('refuses mysql executable comments, whose text runs', () => {
    expect(codes("SELECT 1 /*! INTO OUTFILE '/tmp/x' */", 'mysql')).toEqual(['EXECUTABLE_COMMENT']);
    expect(codes('SELECT 1 /*M!100000 , 2 */', 'mysql')).toEqual(['EXECUTABLE_COMMENT']);
  });

  it('gives the line and column of a problem', () => {
    expect(checkQueryText("SELECT 1,\n  '{{status}}'", 'postgres', defs)[0].message).toContain('line 2, column 4');
  });
});

describe('optional clauses [[ ... ]]', () => {
  const text = 'SELECT * FROM t WHERE 1 = 1 [[AND status = {{status}}]] [[AND id IN ({{ids}})]] AND r = {{region}}';

  it('keeps a clause whose parameters have values and drops the others', () => {
    expect(compileQuery(text, 'postgres', defs, { status: 'open', region: 'eu' })).toEqual({
      text: 'SELECT * FROM t WHERE 1 = 1 AND status = $1  AND r = $2',
      values: ['open', 'eu'],
    });
    expect(compileQuery(text, 'mysql', defs, { ids: [], region: 'eu', status: null })).toEqual({
      text: 'SELECT * FROM t WHERE 1 = 1   AND r = ?',
      values: ['eu'],
    });
    expect(compileQuery(text, 'postgres', defs, { ids: [7, 8], region: 'eu' })).toEqual({
      text: 'SELECT * FROM t WHERE 1 = 1  AND id IN ($1, $2) AND r = $3',
      values: [7, 8, 'eu'],
    });
  });

  it('refuses nested, unclosed and parameterless clauses', () => {
    expect(codes('SELECT 1 [[ AND a = {{status}} [[ AND b = {{ids}} ]] ]]', 'postgres')).toEqual(['NESTED_OPTIONAL']);
    expect(codes('SELECT 1 [[ AND a = {{status}}', 'mysql')).toEqual(['UNCLOSED_OPTIONAL']);
    expect(codes('SELECT 1 [[ AND a = 1 ]]', 'postgres')).toEqual(['OPTIONAL_WITHOUT_PARAMETER']);
  });

  it('leaves ]] outside a clause to the database (postgres subscripts)', () => {
    expect(codes('SELECT a[b[1]] FROM t', 'postgres')).toEqual([]);
  });
});

describe('statement rules', () => {
  const writes: Array<[string, string, SqlDialect]> = [
    ['INSERT', "INSERT INTO t VALUES (1)", 'postgres'],
    ['UPDATE', 'UPDATE t SET a = 1', 'mysql'],
    ['DELETE', 'DELETE FROM t', 'postgres'],
    ['SET TRANSACTION READ WRITE', 'SET TRANSACTION READ WRITE', 'postgres'],
    ['COPY', "COPY t TO '/tmp/t.csv'", 'postgres'],
    ['CALL', 'CALL do_things()', 'mysql'],
    ['DO', "DO $$ BEGIN PERFORM 1; END $$", 'postgres'],
    ['LOCK', 'LOCK TABLE t', 'postgres'],
    ['BEGIN', 'BEGIN', 'postgres'],
    ['COMMIT', 'COMMIT', 'mysql'],
    ['START TRANSACTION', 'START TRANSACTION', 'mysql'],
    ['SELECT ... INTO (postgres creates a table)', 'SELECT * INTO copy_of_t FROM t', 'postgres'],
    ['SELECT ... INTO OUTFILE', "SELECT * FROM t INTO OUTFILE '/tmp/t'", 'mysql'],
    ['SELECT ... INTO DUMPFILE', "SELECT a FROM t INTO DUMPFILE '/tmp/t'", 'mysql'],
    ['SELECT ... INTO @variable', 'SELECT a INTO @x FROM t', 'mysql'],
    ['writable CTE (DELETE)', 'WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone', 'postgres'],
    ['writable CTE (INSERT)', 'WITH x AS (INSERT INTO t VALUES (1) RETURNING id) SELECT id FROM x', 'postgres'],
    ['writable CTE (MERGE)', 'WITH m AS (MERGE INTO t USING s ON true WHEN MATCHED THEN DO NOTHING) SELECT 1', 'postgres'],
    ['EXPLAIN ANALYZE', 'EXPLAIN ANALYZE SELECT 1', 'postgres'],
    ['EXPLAIN (ANALYZE)', 'EXPLAIN (ANALYZE, BUFFERS) SELECT 1', 'postgres'],
    ['SELECT ... FOR UPDATE', 'SELECT * FROM t FOR UPDATE', 'mysql'],
    ['CREATE', 'CREATE TABLE x (a int)', 'postgres'],
  ];
  it.each(writes)('refuses %s', (_what, text, dialect) => {
    expect(codes(text, dialect)).toEqual(['NOT_A_READ']);
    expect(thrown(() => compileQuery(text, dialect, defs, {})).code).toBe('ERR_QRY_009');
  });

  it('refuses SELECT 1; COMMIT; INSERT ... as several statements, not reads', () => {
    const text = 'SELECT 1; COMMIT; INSERT INTO t VALUES (1)';
    for (const dialect of ['postgres', 'mysql'] as const) {
      expect(codes(text, dialect)).toEqual(['MULTIPLE_STATEMENTS', 'NOT_A_READ', 'NOT_A_READ']);
      const err = thrown(() => compileQuery(text, dialect, defs, {}));
      expect(err.code).toBe('ERR_QRY_009');
      expect((err.relatedInfo?.errors as unknown[]).length).toBe(3);
    }
    expect(codes('SELECT 1; SELECT 2', 'postgres')).toEqual(['MULTIPLE_STATEMENTS']);
    expect(thrown(() => compileQuery('SELECT 1; SELECT 2', 'mysql', defs, {})).code).toBe('ERR_QRY_002');
  });

  const reads: Array<[string, string, SqlDialect]> = [
    ['SELECT', 'SELECT 1', 'postgres'],
    ['parenthesised SELECT', '(SELECT 1) UNION (SELECT 2)', 'postgres'],
    ['WITH', 'WITH a AS (SELECT 1 AS x) SELECT x FROM a', 'postgres'],
    ['WITH MATERIALIZED', 'WITH a AS MATERIALIZED (SELECT 1) SELECT * FROM a', 'postgres'],
    ['VALUES', 'VALUES (1), (2)', 'postgres'],
    ['TABLE', 'TABLE orders', 'mysql'],
    ['SHOW', 'SHOW TABLES', 'mysql'],
    ['EXPLAIN', 'EXPLAIN SELECT * FROM t', 'postgres'],
    ['DESCRIBE', 'DESCRIBE t', 'mysql'],
    ['trailing semicolon', 'select 1;', 'mysql'],
    ['write words in strings', "SELECT 'INSERT INTO t; COMMIT; DELETE' AS s", 'postgres'],
    ['write words in comments', '-- DELETE FROM t;\nSELECT 1 /* UPDATE t SET a = 1; */', 'postgres'],
    ['write words in quoted identifiers', 'SELECT "into", "update" FROM "delete"', 'postgres'],
    ['write words in back quotes', 'SELECT `into`, `update` FROM `delete`', 'mysql'],
    ['write words in dollar quotes', 'SELECT $q$ INSERT INTO t; COMMIT $q$', 'postgres'],
    ['write words after #', 'SELECT 1 # ; INSERT INTO t\n', 'mysql'],
    ['write words in double-quoted mysql strings', 'SELECT "INTO OUTFILE \\" ; DROP"', 'mysql'],
    ['identifiers containing the words', 'SELECT inserted_at, updated_by, into_x FROM deleted_rows', 'postgres'],
    ['merge as a column', 'SELECT merge FROM t', 'postgres'],
  ];
  it.each(reads)('lets %s through', (_what, text, dialect) => {
    expect(codes(text, dialect)).toEqual([]);
    expect(() => compileQuery(text, dialect, defs, {})).not.toThrow();
  });

  it('refuses an empty text and a text over the limit', () => {
    expect(codes('  -- nothing\n ;', 'postgres')).toEqual(['EMPTY_QUERY']);
    expect(codes(`SELECT 1 ${' '.repeat(MAX_QUERY_TEXT)}`, 'postgres')).toEqual(['TEXT_TOO_LONG']);
  });
});

describe('hostile 100 KB texts stay linear', () => {
  const N = 100_000;
  /** CPU time of a linear pass over 100 KB is milliseconds; a backtracking scan took minutes. */
  const BOUND_CPU_MS = 2000;

  function timed<T>(run: () => T): T {
    const { result, cpuMs } = cpuMsOf(run);
    expect(cpuMs).toBeLessThan(BOUND_CPU_MS);
    return result;
  }

  /** Expected codes per dialect ([] when only the time matters; mysql has no dollar quotes and does not nest comments). */
  const inputs: Array<[string, string, QueryIssueCode[], QueryIssueCode[]]> = [
    ['an unterminated string', `SELECT '${'{{ a '.repeat(N / 5)}`, ['UNTERMINATED'], ['UNTERMINATED']],
    ['an unterminated dollar quote', `SELECT $tag$${'$ta'.repeat(N / 3)}`, ['UNTERMINATED'], []],
    ['many dollar-quote starts', `SELECT ${'$a'.repeat(N / 2)}`, [], []],
    ['repeated {{', `SELECT ${'{{'.repeat(N / 2)}`, ['INVALID_PLACEHOLDER'], ['INVALID_PLACEHOLDER']],
    ['repeated {{ name without }}', `SELECT ${'{{ status '.repeat(N / 10)}`, ['INVALID_PLACEHOLDER'], ['INVALID_PLACEHOLDER']],
    ['nested comment openers', `SELECT 1 ${'/*'.repeat(N / 2)}`, ['UNTERMINATED'], []],
    ['placeholders in a comment', `SELECT 1 /* ${'{{status}}'.repeat(N / 10)} */`, ['PLACEHOLDER_IN_LITERAL'], ['PLACEHOLDER_IN_LITERAL']],
    ['doubled quotes', `SELECT '${"''".repeat(N / 2)}`, ['UNTERMINATED'], ['UNTERMINATED']],
    ['backslashes', `SELECT '${'\\'.repeat(N / 2)}`, ['UNTERMINATED'], ['UNTERMINATED']],
    ['many statements', 'SELECT 1;'.repeat(N / 9), ['MULTIPLE_STATEMENTS'], ['MULTIPLE_STATEMENTS']],
  ];
  it.each(inputs)('%s', (_what, text, postgres, mysql) => {
    for (const [dialect, expected] of [['postgres', postgres], ['mysql', mysql]] as const) {
      const found = timed(() => codes(text.slice(0, MAX_QUERY_TEXT), dialect));
      expect(found.length).toBeLessThanOrEqual(50);
      for (const code of expected) expect(found).toContain(code);
    }
  });

  it('compiles 10,000 placeholders and optional clauses in linear time', () => {
    const text = `SELECT 1 WHERE true ${'[[ AND a = {{status}} ]] AND b IN ({{ids}}) '.repeat(2000)}`;
    const q = timed(() => compileQuery(text, 'postgres', defs, { ids: [1, 2] }));
    expect(q.values).toEqual([1, 2]);
  });
});

describe('random texts of the tricky pieces', () => {
  const pieces = ["'", '"', '`', '$', '$a$', '$$', '--', '-- ', '#', '/*', '*/', '/*!', '{{', '}}', ' status ', '{{status}}',
    '{{ids}}', '[[', ']]', ';', 'SELECT ', 'INTO ', '\\', '\n', 'E', '?', '$1', '(', 'x'];

  it('answers with issues or a compiled statement that scans the same, never anything else', () => {
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff);
    for (let n = 0; n < 3000; n += 1) {
      let text = 'SELECT ';
      for (let len = next() % 12; len > 0; len -= 1) text += pieces[next() % pieces.length];
      for (const dialect of ['postgres', 'mysql'] as const) {
        const issues = checkQueryText(text, dialect, defs);
        let compiled: { text: string; values: unknown[] } | undefined;
        try {
          compiled = compileQuery(text, dialect, defs, { status: 's', ids: [1, 2] });
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
        }
        // A text without issues compiles, and one with issues never does.
        expect(compiled === undefined).toBe(issues.length > 0);
        // The compiled statement reads the same way: only the bind markers it was given are new.
        if (compiled) expect(checkQueryText(compiled.text, dialect, defs).filter((i) => i.code !== 'BIND_MARKER')).toEqual([]);
      }
    }
  });
});
