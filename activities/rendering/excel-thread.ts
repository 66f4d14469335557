import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { AppError } from '../../domain/errors';
import { renderExcel } from './excel-renderer';
import type { ExcelThreadMessage, ExcelThreadReply, ExcelThreadTask } from './excel-threads';
import { PieceAssembler } from './piecewise';

/**
 * One Excel thread (excel-threads.ts): builds workbooks with ExcelJS, one at a time, so the event
 * loop that answers HTTP, heartbeats and polls Temporal never spends the seconds a 100,000-row
 * workbook takes. It runs at a lower priority than the main thread. A task arrives in pieces (piecewise.ts), then `build`. The workbook's bytes travel back without a copy (a transferred ArrayBuffer);
 * a domain error travels back as its code, message and relatedInfo.
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

port.on('message', (message: ExcelThreadMessage) => {
  if (message.kind === 'piece') {
    if (receiving?.id !== message.id) receiving = { id: message.id, assembler: new PieceAssembler() };
    receiving.assembler.apply(message.piece);
    return;
  }
  const task = (receiving?.id === message.id ? receiving.assembler.value : undefined) as ExcelThreadTask | undefined;
  receiving = undefined;
  void (async () => {
    let reply: ExcelThreadReply;
    let transfer: ArrayBuffer[] = [];
    try {
      if (!task) throw new Error(`Excel task ${message.id} arrived incomplete`);
      const body = await renderExcel(task.schema, task.data, task.options);
      const bytes = new Uint8Array(body.byteLength);
      bytes.set(body);
      reply = { id: message.id, ok: true, body: bytes.buffer };
      transfer = [bytes.buffer];
    } catch (err) {
      reply =
        err instanceof AppError
          ? { id: message.id, ok: false, error: { code: err.code, message: err.message, relatedInfo: err.relatedInfo } }
          : { id: message.id, ok: false, error: { message: (err as Error)?.message ?? String(err), stack: (err as Error)?.stack } };
    }
    port.postMessage(reply, transfer);
  })();
});
