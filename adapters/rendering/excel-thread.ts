import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { AppError } from '../../domain/errors';
import { Writable } from 'node:stream';
import { renderExcel, renderExcelTo, type RowSource } from './excel-renderer';
import type { ExcelThreadEvent, ExcelThreadMessage, ExcelThreadReply, ExcelThreadTask } from './excel-threads';
import { PieceAssembler } from './piecewise';
import { workbookGrid } from './workbook-grid';

/**
 * One Excel thread (excel-threads.ts): builds workbooks with ExcelJS, one at a time, so the event
 * loop that answers HTTP, heartbeats and polls Temporal never spends the seconds a 100,000-row
 * workbook takes. It runs at a lower priority than the main thread. A task arrives in pieces (piecewise.ts), then `build`. The workbook's bytes travel back without a copy (a transferred ArrayBuffer),
 * whole or, for a streaming build, chunk by chunk; a domain error travels back as its code,
 * message and relatedInfo.
 */

const port = parentPort;
if (!port) throw new Error('excel-thread runs as a worker thread (excel-threads.ts)');

// Below normal priority, this thread only (Linux nice values are per thread): on a busy machine
// the process's main thread, which heartbeats and polls, gets the CPU first.
try {
  setPriority(10);
} catch {
  // Not permitted here: the thread keeps its priority.
}

let receiving: { id: number; assembler: PieceAssembler } | undefined;
/** The streaming build's waits on the main thread: batches by cursor, and the last chunk's acknowledgement. */
const waitingRows = new Map<number, (rows: unknown[] | null) => void>();
let waitingAck: (() => void) | undefined;
let nextCursor = 1;

/** A source's rows, asked of the main thread a batch at a time; ending the pass early tells it so. */
function remoteSource(id: number, source: string): RowSource {
  return async function* rows() {
    const cursor = nextCursor++;
    let ended = false;
    try {
      for (;;) {
        const batch = await new Promise<unknown[] | null>((resolve) => {
          waitingRows.set(cursor, resolve);
          port!.postMessage({ id, kind: 'next', cursor, source } satisfies ExcelThreadEvent);
        });
        if (batch === null) {
          ended = true;
          return;
        }
        yield batch;
      }
    } finally {
      if (!ended) port!.postMessage({ id, kind: 'close', cursor } satisfies ExcelThreadEvent);
    }
  };
}

/** The workbook's bytes to the main thread, one chunk (or a few, joined) at a time, each acknowledged. */
function remoteOutput(id: number): Writable {
  const send = (chunk: Buffer, done: (err?: Error | null) => void) => {
    const bytes = new Uint8Array(chunk.length);
    bytes.set(chunk);
    waitingAck = () => done();
    port!.postMessage({ id, kind: 'chunk', bytes: bytes.buffer } satisfies ExcelThreadEvent, [bytes.buffer]);
  };
  return new Writable({
    highWaterMark: 256 * 1024,
    write: (chunk: Buffer, _encoding, done) => send(chunk, done),
    writev: (chunks, done) => send(Buffer.concat(chunks.map((c) => c.chunk as Buffer)), done),
  });
}

port.on('message', (message: ExcelThreadMessage) => {
  if (message.kind === 'piece') {
    if (receiving?.id !== message.id) receiving = { id: message.id, assembler: new PieceAssembler() };
    receiving.assembler.apply(message.piece);
    return;
  }
  if (message.kind === 'rows') {
    const resolve = waitingRows.get(message.cursor);
    waitingRows.delete(message.cursor);
    resolve?.(message.rows);
    return;
  }
  if (message.kind === 'ack') {
    const ack = waitingAck;
    waitingAck = undefined;
    ack?.();
    return;
  }
  const task = (receiving?.id === message.id ? receiving.assembler.value : undefined) as ExcelThreadTask | undefined;
  receiving = undefined;
  const { stream } = message;
  void (async () => {
    let reply: ExcelThreadReply;
    let transfer: ArrayBuffer[] = [];
    try {
      if (!task) throw new Error(`Excel task ${message.id} arrived incomplete`);
      if (stream) {
        const out = remoteOutput(message.id);
        const finished = new Promise<void>((resolve, reject) => out.once('finish', resolve).once('error', reject));
        const sources = Object.fromEntries(stream.sources.map((name) => [name, remoteSource(message.id, name)]));
        await renderExcelTo(task.schema, task.data, task.options, out, sources);
        await finished;
        reply = { id: message.id, ok: true };
      } else {
        const body = await renderExcel(task.schema, task.data, task.options);
        const grid = message.grid ? await workbookGrid(body) : undefined;
        const bytes = new Uint8Array(body.byteLength);
        bytes.set(body);
        reply = { id: message.id, ok: true, body: bytes.buffer, ...(grid ? { grid } : {}) };
        transfer = [bytes.buffer];
      }
    } catch (err) {
      reply =
        err instanceof AppError
          ? { id: message.id, ok: false, error: { code: err.code, message: err.message, relatedInfo: err.relatedInfo } }
          : { id: message.id, ok: false, error: { message: (err as Error)?.message ?? String(err), stack: (err as Error)?.stack } };
    }
    port.postMessage(reply, transfer);
  })();
});
