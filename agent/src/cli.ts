#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent } from './agent';
import { AGENT_VERSION, createClient } from './client';
import { AgentExit } from './exit';
import { keyFingerprint, loadOrCreateKey } from './keys';
import { createLog, LOG_LEVELS, type LogLevel } from './log';

/**
 * `formwork-agent`: the reporting agent's command line (docs/agent.md). Every flag has an
 * environment variable; a flag wins over its variable. The token is best given by
 * FORMWORK_AGENT_TOKEN or --token-file: a --token flag is visible to every user of the host in `ps`.
 */

const USAGE = `formwork-agent ${AGENT_VERSION}: runs Formwork reporting queries against databases in this network

Usage: formwork-agent --url https://formwork.example [options]

  --url URL                 the Formwork service (FORMWORK_URL)
  --token fmag_...          the agent token (FORMWORK_AGENT_TOKEN; prefer the variable or --token-file)
  --token-file PATH         a file holding the agent token (FORMWORK_AGENT_TOKEN_FILE)
  --key-file PATH           the agent's private key, created on first start
                            (FORMWORK_AGENT_KEY_FILE; default ~/.formwork-agent/agent-key.pem)
  --max-concurrency N       tasks run at once, 1-32 (FORMWORK_AGENT_MAX_CONCURRENCY; default 4)
  --shutdown-grace SECONDS  on SIGTERM/SIGINT, how long running tasks may finish (FORMWORK_AGENT_SHUTDOWN_GRACE; default 30)
  --log-level LEVEL         debug, info, warn or error (FORMWORK_AGENT_LOG_LEVEL; default info)
  --version                 print the version and exit
  --help                    print this help and exit
`;

interface Settings {
  url: string;
  token: string;
  keyFile: string;
  maxConcurrency: number;
  shutdownGraceMs: number;
  logLevel: LogLevel;
}

/** Host names of this machine, for which plain http stays on it. */
const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

function integer(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(n) || n < min || n > max) throw new AgentExit(`${name} must be a whole number from ${min} to ${max} (got "${text}")`);
  return n;
}

function settings(argv: string[], env: NodeJS.ProcessEnv): Settings | 'help' | 'version' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        'token-file': { type: 'string' },
        'key-file': { type: 'string' },
        'max-concurrency': { type: 'string' },
        'shutdown-grace': { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new AgentExit(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (values.help) return 'help';
  if (values.version) return 'version';
  const pick = (flag: string, variable: string) => {
    const v = values[flag];
    return typeof v === 'string' ? v : env[variable];
  };

  const url = pick('url', 'FORMWORK_URL');
  if (!url) throw new AgentExit(`--url (or FORMWORK_URL) is required\n\n${USAGE}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AgentExit(`--url is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new AgentExit('--url must be an https:// URL');
  // The token and every result would cross the network in clear: plain http only to this machine.
  if (parsed.protocol === 'http:' && !LOOPBACK.test(parsed.hostname)) {
    throw new AgentExit(`--url must be https:// (plain http:// only to this machine: localhost, 127.0.0.0/8 or [::1]); got ${parsed.origin}`);
  }

  let token = pick('token', 'FORMWORK_AGENT_TOKEN');
  const tokenFile = pick('token-file', 'FORMWORK_AGENT_TOKEN_FILE');
  if (!token && tokenFile) {
    try {
      token = readFileSync(tokenFile, 'utf8').trim();
    } catch (err) {
      throw new AgentExit(`Cannot read the token file ${tokenFile}: ${(err as Error).message}`);
    }
  }
  if (!token) throw new AgentExit('An agent token is required: FORMWORK_AGENT_TOKEN, --token-file or --token');
  if (!/^fmag_[A-Za-z0-9]+$/.test(token)) throw new AgentExit('The agent token must look like fmag_... (as the service showed it once, when the agent was created)');

  const logLevel = (pick('log-level', 'FORMWORK_AGENT_LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new AgentExit(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);

  const concurrency = pick('max-concurrency', 'FORMWORK_AGENT_MAX_CONCURRENCY');
  const grace = pick('shutdown-grace', 'FORMWORK_AGENT_SHUTDOWN_GRACE');
  return {
    url: parsed.toString(),
    token,
    keyFile: resolve(pick('key-file', 'FORMWORK_AGENT_KEY_FILE') ?? join(homedir(), '.formwork-agent', 'agent-key.pem')),
    maxConcurrency: concurrency === undefined ? 4 : integer('--max-concurrency', concurrency, 1, 32),
    shutdownGraceMs: (grace === undefined ? 30 : integer('--shutdown-grace', grace, 0, 86_400)) * 1000,
    logLevel,
  };
}

function exit(code: number): void {
  // stdout may be a pipe: the last lines are written before the process ends.
  process.stdout.write('', () => process.exit(code));
}

async function main(): Promise<void> {
  let s: ReturnType<typeof settings>;
  try {
    s = settings(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`formwork-agent: ${(err as Error).message}\n`);
    return exit(2);
  }
  if (s === 'help' || s === 'version') {
    process.stdout.write(s === 'help' ? USAGE : `${AGENT_VERSION}\n`);
    return exit(0);
  }
  const log = createLog(s.logLevel);
  try {
    const key = await loadOrCreateKey(s.keyFile);
    log.info('agent_starting', { version: AGENT_VERSION, url: new URL(s.url).origin, keyFile: s.keyFile, keyCreated: key.created, keyFingerprint: keyFingerprint(key.publicKeyPem), maxConcurrency: s.maxConcurrency });
    const agent = new Agent({
      client: createClient(s.url, s.token),
      log,
      privateKey: key.privateKey,
      publicKeyPem: key.publicKeyPem,
      maxConcurrency: s.maxConcurrency,
      shutdownGraceMs: s.shutdownGraceMs,
    });
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals > 1) {
        log.warn('shutdown_forced', { signal });
        return exit(signal === 'SIGINT' ? 130 : 143);
      }
      log.info('signal_received', { signal });
      agent.shutdown();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    exit(await agent.run());
  } catch (err) {
    log.error('agent_failed', { message: err instanceof Error ? err.message : String(err) });
    exit(1);
  }
}

void main();
