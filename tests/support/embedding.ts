import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Frame } from 'puppeteer';
import { readFile } from 'node:fs/promises';

/**
 * The customer's side of the embedded designer (docs/embedding.md): the example server of the docs
 * (docs/examples/embed-designer/server.mjs, run as a customer runs it: its own process, its own
 * port) and a bare page of another origin that frames a given address.
 */

export interface Site {
  /** http://127.0.0.1:<port> */
  origin: string;
  close(): Promise<void>;
}

/** Runs the docs' example server against the service; resolves once it listens (on a free port). */
export async function startExampleSite(env: { FORMWORK_URL: string; FORMWORK_API_KEY: string; TEMPLATE_ID: string; DESIGNER_MODE?: string }): Promise<Site> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, '..', '..', 'docs', 'examples', 'embed-designer', 'server.mjs')], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const origin = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the example server ended (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening on (http:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]);
    });
  });
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A page of its own origin whose only content is an `<iframe>` of `src` (titled `title`). */
export async function startFramingSite(src: string, title: string): Promise<Site> {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Another site</title></head><body><h1>Another site</h1><iframe title="${title}" src="${src.replace(/"/g, '&quot;')}" width="1000" height="600"></iframe></body></html>`;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/') res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let axeSource: string | undefined;

/** axe-core's `critical` findings inside a frame (the designer in the customer's page), through the DevTools protocol. */
export async function criticalAxeViolationsIn(frame: Frame): Promise<Array<{ id: string; help: string }>> {
  axeSource ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await frame.evaluate(axeSource);
  const result = (await frame.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as { violations: Array<{ id: string; impact: string | null; help: string }> };
  return result.violations.filter((v) => v.impact === 'critical').map(({ id, help }) => ({ id, help }));
}
