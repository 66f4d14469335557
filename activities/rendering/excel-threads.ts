import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { AppError, isErrorCode } from '../../domain/errors';
import type { ResolvedData, TemplateSchema } from '../../domain/templates/template.types';
import { threadFile } from '../threads';
import type { ExcelRenderOptions } from './excel-renderer';
import { pieces, type Piece } from './piecewise';

/**
 * The port the rest of the service builds workbooks through. Its adapter, ExcelThreads, builds
 * them on worker threads: ExcelJS spends seconds of pure CPU on a large workbook, and on the
 * process's event loop that would delay heartbeats, Temporal polls and HTTP answers for as long.
 */
export interface ExcelRenderer {
  renderExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions): Promise<Buffer>;
  close(): Promise<void>;
}

/** What one workbook needs; it reaches the thread in pieces (piecewise.ts). */
export interface ExcelThreadTask {
  schema: TemplateSchema;
  data: ResolvedData;
  options: ExcelRenderOptions;
}

/** What excel-thread.ts receives: the pieces of a task, then the word to build it. */
export type ExcelThreadMessage = { id: number; kind: 'piece'; piece: Piece } | { id: number; kind: 'build' };

export type ExcelThreadReply =
  | { id: number; ok: true; body: ArrayBuffer }
  | { id: number; ok: false; error: { code?: string; message: string; relatedInfo?: Record<string, unknown>; stack?: string } };

export interface ExcelThreadsOptions {
  /** Workbooks built at once; further ones wait for a thread (RENDER_POOL_SIZE in the services). */
  size: number;
}

interface Task {
  id: number;
  input: ExcelThreadTask;
  resolve(body: Buffer): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  task?: Task;
}

/**
 * Up to `size` threads running activities/rendering/excel-thread.ts (the compiled file, located by
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

  renderExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('The Excel threads are closed'));
    return new Promise<Buffer>((resolve, reject) => {
      const id = this.nextId++;
      this.queue.push({ id, input: { schema, data, options }, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new Error('The Excel threads were closed'));
    await Promise.all([...this.threads].map((t) => t.worker.terminate()));
    this.threads.clear();
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
      if (thread.task === task) thread.worker.postMessage({ id: task.id, kind: 'build' } satisfies ExcelThreadMessage);
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

  private spawn(): Thread {
    const worker = new Worker(this.file);
    const thread: Thread = { worker };
    this.threads.add(thread);
    worker.on('message', (reply: ExcelThreadReply) => {
      const task = thread.task;
      if (!task || task.id !== reply.id) return;
      thread.task = undefined;
      worker.unref();
      if (reply.ok) task.resolve(Buffer.from(reply.body));
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
