import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { AppError, isErrorCode } from '../../domain/errors';
import type { WorkbookGrid } from '../../domain/documents/previews';
import type { ResolvedData, TemplateSchema } from '../../domain/templates/template.types';
import { threadFile } from '../threads';
import type { ExcelRenderOptions, RowSource } from './excel-renderer';
import { pieces, type Piece } from './piecewise';

/**
 * The port the rest of the service builds workbooks through. Its adapter, ExcelThreads, builds
 * them on worker threads: ExcelJS spends seconds of pure CPU on a large workbook, and on the
 * process's event loop that would delay heartbeats, Temporal polls and HTTP answers for as long.
 */
export interface ExcelRenderer {
  /** Aborting `signal` stops the build (its thread is ended) and rejects with the signal's reason. */
  renderExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, signal?: AbortSignal): Promise<Buffer>;
  /** The workbook and, read back from it on the same thread, its grid for a preview (workbook-grid.ts). */
  renderExcelGrid(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, signal?: AbortSignal): Promise<{ body: Buffer; grid: WorkbookGrid }>;
  /**
   * Builds the workbook without holding it: its bytes go to `io.write` as they are made (the next
   * part waits for the last write), and the tables over `io.sources`' variables read their rows a
   * batch at a time (renderExcelTo). A failed write or source ends the build with that error.
   */
  streamExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, io: ExcelStreamIo, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface ExcelStreamIo {
  /** Top-level array variables whose elements are read in batches (see canStreamVariable). */
  sources: Readonly<Record<string, RowSource>>;
  write(chunk: Buffer): Promise<void>;
}

/** What one workbook needs; it reaches the thread in pieces (piecewise.ts). */
export interface ExcelThreadTask {
  schema: TemplateSchema;
  data: ResolvedData;
  options: ExcelRenderOptions;
}

/**
 * What excel-thread.ts receives: the pieces of a task, then the word to build it (`stream`: the
 * bytes come back in chunks, each acknowledged, and the named sources' rows are asked for a batch
 * at a time, `null` after the last).
 */
export type ExcelThreadMessage =
  | { id: number; kind: 'piece'; piece: Piece }
  | { id: number; kind: 'build'; stream?: { sources: string[] }; grid?: true }
  | { id: number; kind: 'rows'; cursor: number; rows: unknown[] | null }
  | { id: number; kind: 'ack' };

/** What a streaming build asks for while it runs: a source's next batch, the end of a pass, a written chunk. */
export type ExcelThreadEvent =
  | { id: number; kind: 'next'; cursor: number; source: string }
  | { id: number; kind: 'close'; cursor: number }
  | { id: number; kind: 'chunk'; bytes: ArrayBuffer };

export type ExcelThreadReply =
  | { id: number; ok: true; body?: ArrayBuffer; grid?: WorkbookGrid }
  | { id: number; ok: false; error: { code?: string; message: string; relatedInfo?: Record<string, unknown>; stack?: string } };

export interface ExcelThreadsOptions {
  /** Workbooks built at once; further ones wait for a thread (RENDER_POOL_SIZE in the services). */
  size: number;
}

interface Task {
  id: number;
  input: ExcelThreadTask;
  io?: ExcelStreamIo;
  /** Answer the workbook's grid beside it. */
  grid?: true;
  /** A streaming build's open passes over its sources. */
  cursors: Map<number, AsyncIterator<unknown[]>>;
  resolve(result: ThreadResult): void;
  reject(err: Error): void;
}

interface ThreadResult {
  body?: Buffer;
  grid?: WorkbookGrid;
}

interface Thread {
  worker: Worker;
  task?: Task;
}

/**
 * Up to `size` threads running adapters/rendering/excel-thread.ts (the compiled file, located by
 * threadFile). Threads start on first use and stay for the next workbook; an idle thread is
 * unref'd, so it never keeps a process alive on its own. A thread that dies takes only its own
 * workbook with it (that render fails with an ordinary error, which Temporal retries) and is
 * replaced on demand. The code is ours and the rows are capped (EXCEL_MAX_ROWS), so a thread
 * rather than a process: no untrusted expression runs here.
 */
export class ExcelThreads implements ExcelRenderer {
  private readonly threads = new Set<Thread>();
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  private readonly file = threadFile('rendering/excel-thread');

  constructor(private readonly options: ExcelThreadsOptions) {}

  async renderExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, signal?: AbortSignal): Promise<Buffer> {
    return (await this.run({ schema, data, options }, { signal })).body!;
  }

  async renderExcelGrid(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, signal?: AbortSignal): Promise<{ body: Buffer; grid: WorkbookGrid }> {
    const { body, grid } = await this.run({ schema, data, options }, { signal, grid: true });
    return { body: body!, grid: grid! };
  }

  async streamExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, io: ExcelStreamIo, signal?: AbortSignal): Promise<void> {
    await this.run({ schema, data, options }, { io, signal });
  }

  private run(input: ExcelThreadTask, { io, signal, grid }: { io?: ExcelStreamIo; signal?: AbortSignal; grid?: true }): Promise<ThreadResult> {
    if (this.closed) return Promise.reject(new Error('The Excel threads are closed'));
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<ThreadResult>((resolve, reject) => {
      const id = this.nextId++;
      const onAbort = () => this.abort(task, signal!.reason);
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        for (const cursor of task.cursors.values()) void cursor.return?.().catch(() => undefined);
        task.cursors.clear();
      };
      const task: Task = {
        id,
        input,
        io,
        grid,
        cursors: new Map(),
        resolve: (result) => (done(), resolve(result)),
        reject: (err) => (done(), reject(err)),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(task);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new Error('The Excel threads were closed'));
    await Promise.all([...this.threads].map((t) => t.worker.terminate()));
    this.threads.clear();
  }

  /**
   * A cancelled workbook: a queued one leaves the queue; one being built ends its thread, since
   * ExcelJS cannot be interrupted (the thread is replaced on demand, like one that died).
   */
  private abort(task: Task, reason: unknown): void {
    const queued = this.queue.indexOf(task);
    if (queued >= 0) this.queue.splice(queued, 1);
    const thread = [...this.threads].find((t) => t.task === task);
    if (thread) {
      thread.task = undefined;
      this.threads.delete(thread);
      void thread.worker.terminate();
    }
    task.reject(reason as Error);
  }

  /** Hands queued workbooks to idle threads, starting threads up to the size. */
  private pump(): void {
    while (this.queue.length > 0) {
      let thread = [...this.threads].find((t) => !t.task);
      if (!thread) {
        if (this.threads.size >= this.options.size) return;
        thread = this.spawn();
      }
      const task = this.queue.shift()!;
      thread.task = task;
      thread.worker.ref();
      void this.send(thread, task);
    }
  }

  /**
   * Posts the task piece by piece, giving the event loop a turn after each: cloning 100,000 rows
   * in one postMessage would hold this loop for over 100 ms.
   */
  private async send(thread: Thread, task: Task): Promise<void> {
    try {
      for (const piece of pieces(task.input)) {
        if (thread.task !== task) return; // the thread died meanwhile; its exit handler answered
        thread.worker.postMessage({ id: task.id, kind: 'piece', piece } satisfies ExcelThreadMessage);
        await nextTurn();
      }
      const stream = task.io ? { sources: Object.keys(task.io.sources) } : undefined;
      if (thread.task === task) thread.worker.postMessage({ id: task.id, kind: 'build', stream, ...(task.grid ? { grid: true as const } : {}) } satisfies ExcelThreadMessage);
    } catch (err) {
      // Data a thread cannot receive (structured clone refused it): this workbook fails, the thread stays.
      if (thread.task !== task) return;
      thread.task = undefined;
      thread.worker.unref();
      // The thread may hold part of this task; the next task's first piece starts over.
      task.reject(err as Error);
      this.pump();
    }
  }

  /** Answers a streaming build: the next batch of a source, a pass ended early, a chunk written. */
  private async serve(thread: Thread, task: Task, event: ExcelThreadEvent): Promise<void> {
    const { io } = task;
    if (!io) return;
    try {
      if (event.kind === 'chunk') {
        await io.write(Buffer.from(event.bytes));
        if (thread.task === task) thread.worker.postMessage({ id: task.id, kind: 'ack' } satisfies ExcelThreadMessage);
        return;
      }
      if (event.kind === 'close') {
        const cursor = task.cursors.get(event.cursor);
        task.cursors.delete(event.cursor);
        await cursor?.return?.();
        return;
      }
      let cursor = task.cursors.get(event.cursor);
      if (!cursor) {
        if (!Object.prototype.hasOwnProperty.call(io.sources, event.source)) throw new Error(`Excel source ${event.source} is not one of this build's`);
        cursor = io.sources[event.source]()[Symbol.asyncIterator]();
        task.cursors.set(event.cursor, cursor);
      }
      const next = await cursor.next();
      if (next.done) task.cursors.delete(event.cursor);
      if (thread.task === task) thread.worker.postMessage({ id: task.id, kind: 'rows', cursor: event.cursor, rows: next.done ? null : next.value } satisfies ExcelThreadMessage);
    } catch (err) {
      // A source that fails (a damaged stored result) or storage that refuses a chunk ends the build.
      if (thread.task === task) this.abort(task, err);
    }
  }

  private spawn(): Thread {
    const worker = new Worker(this.file);
    const thread: Thread = { worker };
    this.threads.add(thread);
    worker.on('message', (reply: ExcelThreadReply | ExcelThreadEvent) => {
      const task = thread.task;
      if (!task || task.id !== reply.id) return;
      if ('kind' in reply) {
        void this.serve(thread, task, reply);
        return;
      }
      thread.task = undefined;
      worker.unref();
      if (reply.ok) task.resolve({ body: reply.body ? Buffer.from(reply.body) : undefined, grid: reply.grid });
      else task.reject(rebuildError(reply.error));
      this.pump();
    });
    worker.on('error', (err) => {
      // An uncaught error ends the thread; 'exit' follows and clears it.
      thread.task?.reject(new Error(`Excel thread failed: ${err.message}`));
      thread.task = undefined;
    });
    worker.on('exit', (code) => {
      this.threads.delete(thread);
      thread.task?.reject(new Error(`Excel thread exited (code ${code}) while building a workbook`));
      thread.task = undefined;
      if (!this.closed) this.pump();
    });
    return thread;
  }
}

function rebuildError(error: { code?: string; message: string; relatedInfo?: Record<string, unknown>; stack?: string }): Error {
  if (error.code && isErrorCode(error.code)) return new AppError(error.code, error.message, error.relatedInfo);
  const err = new Error(error.message);
  if (error.stack) err.stack = `${error.stack}\n    (in an Excel thread)`;
  return err;
}

let shared: ExcelThreads | undefined;

/**
 * A process-wide set of one thread, for callers that do not bring their own (benchmarks, tests
 * that render directly). Its idle thread is unref'd, so it needs no closing.
 */
export function sharedExcelThreads(): ExcelRenderer {
  shared ??= new ExcelThreads({ size: 1 });
  return shared;
}
