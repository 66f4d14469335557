import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEvalHost } from '../adapters/evaluation/eval-host';
import { createChromiumPool } from '../adapters/rendering/chromium-pool';
import { createPdfTools } from '../adapters/rendering/pdf-tools/pdf-tools';
import { renderDocument, type RenderDeps, type RenderDocumentInput } from '../adapters/rendering/render-document';
import { loadConfig } from '../domain/config';
import type { OutputOptions } from '../domain/documents/output';
import type { TemplateDefinition } from '../domain/templates/template.types';
import { renderLimitsOf } from '../platform/services';
import { intArg as arg, percentile } from './bench-stats';

/**
 * Issue 34's goal (docs/performance.md "Output options"): what each post-processing step of
 * `output` costs against the plain render of the invoice example (docs/examples/invoice.json),
 * measured in the same run. Every document goes through renderDocument with the render worker's
 * stack, built from the configuration as the render worker builds it: the Chromium pool, the
 * evaluation processes and the PDF tools' processes (createPdfTools), so a step's figure includes
 * its process hop and its temporary files. The signature uses a PKCS#12 made with openssl for the
 * run. The sides take turns in rounds (load from elsewhere falls on all of them); a step that
 * throws on its first document is reported "not available: <message>" and left out.
 *
 *   npm run bench:render -- --outputs-only [--outputs-n 60] [--rounds 3] [--concurrency 2]
 */

interface Step {
  name: string;
  format: RenderDocumentInput['format'];
  output?: OutputOptions;
}

const CERTIFICATE_ID = randomUUID();
const STEPS: Step[] = [
  { name: 'plain', format: 'pdf' },
  { name: '+pdfa 3b', format: 'pdf', output: { pdfa: '3b' } },
  { name: '+pdfa 3b +facturx', format: 'pdf', output: { pdfa: '3b', facturx: { profile: 'EN16931' } } },
  { name: '+signature', format: 'pdf', output: { signature: { certificateId: CERTIFICATE_ID, reason: 'Issued', location: 'Bench', visible: false } } },
  { name: '+encryption', format: 'pdf', output: { encryption: { ownerPassword: 'owner-secret', userPassword: '', permissions: { print: true, copy: false, modify: false } } } },
  { name: '+png (first page, 150 dpi)', format: 'png', output: { image: { dpi: 150, pages: 'first' } } },
  { name: 'pdfa 3b + signature', format: 'pdf', output: { pdfa: '3b', signature: { certificateId: CERTIFICATE_ID, reason: 'Issued', location: 'Bench' } } },
];
/** The goal: PDF/A plus a signature within 1.5× of the plain render. */
const GOAL = { step: 'pdfa 3b + signature', ratio: 1.5 };

/**
 * A self-signed certificate and key as PKCS#12, made by openssl for this run. The legacy PBE
 * (3DES, SHA-1 MAC) is the one every PKCS#12 reader takes, OpenSSL 3's default AES one not all.
 */
function makePkcs12(password: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'formwork-bench-p12-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    const p12 = join(dir, 'cert.p12');
    const quiet = { stdio: ['ignore', 'ignore', 'pipe'] as ['ignore', 'ignore', 'pipe'] };
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', '/CN=Formwork bench signer/O=Formwork'], quiet);
    execFileSync(
      'openssl',
      ['pkcs12', '-export', '-inkey', key, '-in', cert, '-out', p12, '-passout', `pass:${password}`, '-certpbe', 'PBE-SHA1-3DES', '-keypbe', 'PBE-SHA1-3DES', '-macalg', 'sha1'],
      quiet,
    );
    return readFileSync(p12);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Side {
  step: Step;
  latencies: number[];
  bytes: number;
  unavailable?: string;
}

export async function benchOutputs(): Promise<void> {
  const n = arg('outputs-n', 60);
  const rounds = arg('rounds', 3);
  const concurrency = arg('concurrency', 2);
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' });
  // Run from dist/scripts, as bench-render.ts reads the same file.
  const example = JSON.parse(readFileSync(join(__dirname, '../../docs/examples/invoice.json'), 'utf8')) as { definition: TemplateDefinition; sampleData: Record<string, unknown> };
  const password = 'bench-p12';
  const p12 = makePkcs12(password);

  const pdfRenderer = createChromiumPool({ ...config.rendering, poolSize: concurrency }, config.browser.executablePath);
  const evaluator = createEvalHost(config.evaluation);
  const pdfTools = createPdfTools({ ...config.rendering.pdfTools, concurrency });
  const deps: RenderDeps = {
    pdfRenderer,
    evaluator,
    limits: renderLimitsOf(config),
    imageAllowlist: config.rendering.imageHostAllowlist,
    pdfTools,
    signing: async () => ({ p12, password }),
    outboundAllowlist: config.outbound.allowlist,
  };
  const renderOne = async (step: Step) =>
    (await renderDocument(deps, { tenant: 'bench', template: example.definition, variables: example.sampleData, format: step.format, output: step.output, title: 'Invoice INV-2026-014' })).body;

  const sides: Side[] = STEPS.map((step) => ({ step, latencies: [], bytes: 0 }));
  try {
    // Warm-up, not counted: every Chromium page, evaluation process and PDF tools process has worked once.
    await Promise.all(Array.from({ length: concurrency * 2 }, () => renderOne(STEPS[0])));
    for (const side of sides) {
      try {
        side.bytes = (await Promise.all(Array.from({ length: concurrency }, () => renderOne(side.step))))[0].length;
      } catch (err) {
        side.unavailable = (err as Error).message.split('\n')[0];
      }
    }
    const share = (round: number) => Math.floor(n / rounds) + (round < n % rounds ? 1 : 0);
    for (let r = 0; r < rounds; r++) {
      for (const side of sides) {
        if (side.unavailable) continue;
        let next = 0;
        const count = share(r);
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < count) {
              next += 1;
              const t0 = performance.now();
              await renderOne(side.step);
              side.latencies.push(performance.now() - t0);
            }
          }),
        );
      }
    }
  } finally {
    await pdfRenderer.close();
    await evaluator.close();
    await pdfTools.close();
  }

  const plain = sides[0];
  const p50 = (s: Side) => percentile(s.latencies, 50);
  const p95 = (s: Side) => percentile(s.latencies, 95);
  const fmt = (x: number, d = 1) => x.toFixed(d).padStart(7);
  console.log(`bench:render outputs  invoice example, ${n} documents per side, concurrency ${concurrency}, ${rounds} rounds, PDF tools in processes (renderDocument + createPdfTools)`);
  console.log(`  ${'side'.padEnd(28)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'x p50'.padStart(7)} ${'x p95'.padStart(7)}    KiB`);
  for (const s of sides) {
    if (s.unavailable) {
      console.log(`  ${s.step.name.padEnd(28)} not available: ${s.unavailable}`);
      continue;
    }
    console.log(`  ${s.step.name.padEnd(28)} ${fmt(p50(s))} ${fmt(p95(s))} ${fmt(p50(s) / p50(plain), 2)} ${fmt(p95(s) / p95(plain), 2)} ${String(Math.round(s.bytes / 1024)).padStart(6)}`);
  }
  const goal = sides.find((s) => s.step.name === GOAL.step)!;
  if (goal.unavailable) console.log(`  goal (${GOAL.step} <= ${GOAL.ratio}x plain, p50): not measured (${goal.unavailable})`);
  else {
    const ratio = p50(goal) / p50(plain);
    console.log(`  goal (${GOAL.step} <= ${GOAL.ratio}x plain, p50): ${ratio.toFixed(2)}x ${ratio <= GOAL.ratio ? 'met' : 'NOT MET'}`);
  }
}
