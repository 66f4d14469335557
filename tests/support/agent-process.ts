import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestFn } from './app';
import { waitFor } from './wait';

/**
 * The `formwork-agent` CLI (agent/src/cli.ts, docs/agent.md) as a customer runs it: `node
 * dist/agent/src/cli.js` in a process of its own (build with `npx tsc -p tsconfig.json` first),
 * talking HTTP to the test app. Its JSON log lines are collected for assertions.
 */
export interface AgentProcess {
  child: ChildProcess;
  keyFile: string;
  /** Everything printed (stdout and stderr). */
  output(): string;
  /** The JSON log lines so far. */
  events(): Array<Record<string, unknown>>;
  /** Waits for a log line with this `event` (and matching `fields`, if given). */
  waitForEvent(event: string, fields?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): void;
  /** Waits for the process to exit; rejects after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (then SIGKILL if it lingers) and removes the key directory the helper made. */
  stop(): Promise<void>;
}

export interface AgentProcessOptions {
  url: string;
  token: string;
  /** Default: a fresh key file in a temp directory (a new key pair on first start). */
  keyFile?: string;
  /** More flags: `--max-concurrency`, `--shutdown-grace`, `--log-level`... */
  args?: string[];
  /** Extra environment (the values of `agent_local` secrets, FORMWORK_* variables). */
  env?: Record<string, string>;
  /** `env`: pass the token as FORMWORK_AGENT_TOKEN instead of `--token` (default `flag`). */
  tokenVia?: 'flag' | 'env';
}

const ENTRY = join(__dirname, '..', '..', 'dist', 'agent', 'src', 'cli.js');

export async function startAgentProcess(opts: AgentProcessOptions): Promise<AgentProcess> {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npx tsc -p tsconfig.json\` first`);
  const ownDir = opts.keyFile ? null : await mkdtemp(join(tmpdir(), 'formwork-agent-key-'));
  const keyFile = opts.keyFile ?? join(ownDir as string, 'agent-key.pem');
  const args = [ENTRY, '--url', opts.url, '--key-file', keyFile, ...(opts.tokenVia === 'env' ? [] : ['--token', opts.token]), ...(opts.args ?? [])];
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      ...(opts.tokenVia === 'env' ? { FORMWORK_AGENT_TOKEN: opts.token } : {}),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  const events: Array<Record<string, unknown>> = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const text = d.toString();
    printed += text;
    partial += text;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Not a log line (help text): kept in output() only.
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (printed += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const matches = (e: Record<string, unknown>, event: string, fields: Record<string, unknown>) => e.event === event && Object.entries(fields).every(([k, v]) => e[k] === v);
  const running = () => child.exitCode === null && child.signalCode === null;

  return {
    child,
    keyFile,
    output: () => printed,
    events: () => [...events],
    waitForEvent: (event, fields = {}, timeoutMs = 20_000) =>
      waitFor(
        () => {
          const found = events.find((e) => matches(e, event, fields));
          if (!found && !running()) throw new Error(`the agent exited:\n${printed}`);
          return found;
        },
        { timeoutMs, what: `agent log event ${event} ${JSON.stringify(fields)}` },
      ),
    kill: (signal = 'SIGTERM') => {
      if (running()) child.kill(signal);
    },
    exited: async (timeoutMs = 20_000) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the agent did not exit within ${timeoutMs} ms:\n${printed}`)), timeoutMs);
      });
      try {
        return await Promise.race([exit, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    stop: async () => {
      if (running()) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
      if (ownDir) await rm(ownDir, { recursive: true, force: true });
    },
  };
}

/**
 * What an admin does after an agent's first session (docs/agent.md "Confirming the key"): waits for
 * the key the agent sent, compares nothing (the test trusts its own agent) and confirms it by the
 * fingerprint the API shows. Until then the agent leases no task and nothing is sealed to its key.
 */
export async function confirmAgentKey(request: RequestFn, auth: { token: string; headers?: Record<string, string> }, agentId: string): Promise<Record<string, any>> {
  const pending = await waitFor(
    async () => {
      const res = await request('GET', `/api/agents/${agentId}`, auth);
      return res.body.keyStatus === 'pending' ? res.body : undefined;
    },
    { timeoutMs: 20_000, what: 'the agent key sent' },
  );
  const res = await request('POST', `/api/agents/${agentId}/key/confirm`, { ...auth, body: { fingerprint: pending.keyFingerprint } });
  if (res.status !== 200) throw new Error(`key not confirmed: ${res.status} ${res.text}`);
  return res.body;
}
