import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { QueryResultSummary, RowSink } from '@formwork/wire';

/**
 * A query result on its way to the service: the runner writes its object-per-line NDJSON to a temp
 * file (the sink); the upload then reads it back as the protocol's NDJSON (docs/reporting.md "The agent protocol": a
 * columns line, one JSON array per row in column order, a trailer), gzip-compressed on the fly. The temp
 * directory (mode 0700) is removed in `dispose`, whatever happened.
 */
export class ResultFile {
  private constructor(
    private readonly dir: string,
    private readonly path: string,
    private readonly out: WriteStream,
  ) {}

  static async create(): Promise<ResultFile> {
    const dir = await mkdtemp(join(tmpdir(), 'formwork-agent-'));
    const path = join(dir, 'rows.ndjson');
    const out = createWriteStream(path, { mode: 0o600 });
    out.on('error', () => undefined);
    return new ResultFile(dir, path, out);
  }

  readonly sink: RowSink = {
    write: async (line) => {
      if (!this.out.write(line)) await once(this.out, 'drain');
    },
  };

  async finish(): Promise<void> {
    if (this.out.writableFinished) return;
    this.out.end();
    await once(this.out, 'finish');
  }

  /** The gzip-compressed protocol NDJSON of the rows written, given the runner's summary. */
  upload(summary: QueryResultSummary): Readable {
    const { path } = this;
    const names = summary.columns.map((c) => c.name);
    async function* lines() {
      yield `${JSON.stringify({ columns: summary.columns.map((c) => ({ name: c.name, type: c.dataType })) })}\n`;
      const input = createReadStream(path, { encoding: 'utf8' });
      try {
        for await (const line of createInterface({ input, crlfDelay: Infinity })) {
          if (!line) continue;
          const row = JSON.parse(line) as Record<string, unknown>;
          yield `${JSON.stringify(names.map((n) => (row[n] === undefined ? null : row[n])))}\n`;
        }
      } finally {
        input.destroy();
      }
      yield `${JSON.stringify({ end: true, rowCount: summary.rowCount, truncated: summary.truncated, durationMs: summary.durationMs })}\n`;
    }
    const gzip = createGzip();
    // A read or parse error destroys the gzip stream with it, which fails the upload.
    pipeline(Readable.from(lines()), gzip, () => undefined);
    return gzip;
  }

  async dispose(): Promise<void> {
    this.out.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
