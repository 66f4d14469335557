import { execFile } from 'node:child_process';
import { AppError } from '../../../domain/errors';

/**
 * Runs an external PDF tool (qpdf, pdftoppm, pdfinfo) from a PDF tools worker process, the way the
 * house rules ask for untrusted input: no shell (arguments go to execve as they are), its own
 * resource limits through `prlimit` (address space, CPU seconds, size of any file it writes), a
 * small environment (not the worker's, which holds the service's secrets) and its working folder
 * the call's private folder. The CPU limit also ends a tool whose worker was ended under it (a
 * timed-out call), which would otherwise run on as an orphan.
 */

export interface ToolLimits {
  /** RLIMIT_AS: the tool's address space; past it allocations fail and the tool stops. */
  memoryBytes: number;
  /** RLIMIT_CPU: the kernel ends the tool (SIGXCPU, then SIGKILL) after this much CPU time. */
  cpuSeconds: number;
  /** RLIMIT_FSIZE: the largest file the tool may write (SIGXFSZ past it). */
  fileBytes?: number;
  /** The working folder: the call's private folder. */
  cwd: string;
}

export interface ToolRun {
  /** The exit status; null when a signal ended the tool (see `signal`). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A default for the PDF tools' external programs: 1 GiB of address space, 120 s of CPU. */
export const TOOL_MEMORY_BYTES = 1024 * 1024 * 1024;
export const TOOL_CPU_SECONDS = 120;

/** Wall-clock backstop (the CPU limit does not count time spent blocked). */
const WALL_CLOCK_MS = 10 * 60 * 1000;
/** What a tool may print: pdfinfo lists two lines per page. */
const MAX_PRINTED = 8 * 1024 * 1024;

export function runTool(command: string, args: readonly string[], limits: ToolLimits): Promise<ToolRun> {
  const prlimits = [`--as=${limits.memoryBytes}`, `--cpu=${limits.cpuSeconds}`, ...(limits.fileBytes ? [`--fsize=${limits.fileBytes}`] : [])];
  return new Promise((resolve, reject) => {
    execFile(
      'prlimit',
      [...prlimits, '--', command, ...args],
      {
        cwd: limits.cwd,
        shell: false,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? limits.cwd, TMPDIR: limits.cwd, LC_ALL: 'C' },
        maxBuffer: MAX_PRINTED,
        timeout: WALL_CLOCK_MS,
        killSignal: 'SIGKILL',
        encoding: 'utf8',
        windowsHide: true,
      },
      (err, stdout, stderr) => {
        if (!err) return resolve({ code: 0, signal: null, stdout, stderr });
        const e = err as NodeJS.ErrnoException & { code?: number | string; signal?: NodeJS.Signals | null; killed?: boolean };
        // Not started at all (prlimit missing): a fault of the installation, not of the document.
        if (typeof e.code === 'string') return reject(new Error(`${command} could not be started: ${e.message}`));
        if (e.killed && e.signal === 'SIGKILL' && !e.code) return reject(new AppError('ERR_OUTPUT_004', `${command} took too long`));
        resolve({ code: typeof e.code === 'number' ? e.code : null, signal: e.signal ?? null, stdout, stderr });
      },
    );
  });
}

/**
 * A run that ended by a signal or out of memory (the limits above) is the document's cost:
 * ERR_OUTPUT_004 (a file over `fileBytes` is the caller's to name). Anything else that failed is
 * answered as the tool's own message, cut short.
 */
export function toolFailure(command: string, run: ToolRun, scrub: (s: string) => string = (s) => s): Error {
  if (run.signal === 'SIGXCPU' || run.signal === 'SIGKILL') return new AppError('ERR_OUTPUT_004', `${command} needed more time than allowed`);
  if (run.signal || /out of memory|bad_alloc|cannot allocate|Out of memory/i.test(run.stderr)) return new AppError('ERR_OUTPUT_004', `${command} needed more memory than allowed`);
  return new Error(`${command} failed (exit ${run.code}): ${scrub(run.stderr).slice(0, 500)}`);
}
