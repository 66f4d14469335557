import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The layer rules (eslint.layers.mjs, docs/architecture.md "Layers") refuse the imports that would
 * turn the dependency picture around, and let through what each layer may use. ESLint runs in its
 * own Node process (it loads the ES-module config, which Jest's CommonJS sandbox cannot).
 */
const root = join(__dirname, '../../..');

function problems(cases: Array<[file: string, code: string]>): number[] {
  const script = `
    import { ESLint } from 'eslint';
    import tseslint from 'typescript-eslint';
    import layers from './eslint.layers.mjs';
    const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: true,
      overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layers] });
    const out = [];
    for (const [file, code] of JSON.parse(process.argv[1])) out.push((await eslint.lintText(code, { filePath: file }))[0].messages.length);
    console.log(JSON.stringify(out));`;
  const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(cases)], { cwd: root, encoding: 'utf8' });
  return JSON.parse(stdout) as number[];
}

describe('layer import rules', () => {
  it('refuse imports against the direction of the layers', () => {
    const refused: Array<[string, string]> = [
      ['domain/flow/a.ts', "import type { DataSource } from 'typeorm';"],
      ['domain/flow/a.ts', "import { Client } from '@temporalio/client';"],
      ['domain/flow/a.ts', "import Router from '@koa/router';"],
      ['domain/flow/a.ts', "import type { RunEntity } from '../../db/flow/run.entity';"],
      ['workflows/flow/a.ts', "import { createFlowActivities } from '../../activities/flow';"],
      ['workflows/flow/a.ts', "import { randomUUID } from 'node:crypto';"],
      ['workflows/flow/a.ts', "import type { GateEntity } from '../../db/flow/gate.entity';"],
      ['api/identity/a.ts', "import { deleteAccountWorkflow } from '../../workflows/identity/account-deletion.workflow';"],
      ['api/documents/a.ts', "import { createDocumentActivities } from '../../activities/documents';"],
      ['api/flow/a.ts', "import { createApprovalActivities } from '../../activities/flow/approvals.activity';"],
      ['activities/documents/a.ts', "import { presentJob } from '../../api/documents/documents.routes';"],
      ['db/flow/a.ts', "import type { Mailer } from '../../adapters/mail/mailer';"],
      ['adapters/channels/a.ts', "import { attemptDelivery } from '../../activities/webhooks/attempt-delivery.activity';"],
      ['adapters/rendering/a.ts', "import { assetContents } from '../../db/templates/asset-rows';"],
      ['adapters/http/a.ts', "import { startWorkflow } from '../../platform/start-workflow';"],
      ['api/reporting/a.ts', "import { storedRows } from '../../activities/reporting/stored-rows';"],
      ['agent/src/a.ts', "import { AppError } from '../../domain/errors';"],
      ['packages/wire/src/a.ts', "import { loadConfig } from '../../../domain/config';"],
      ['worker/a.ts', "import { generateJob } from '../api/documents/jobs.service';"],
      ['platform/a.ts', "import { startApiServer } from '../api/server';"],
      ['scripts/a.ts', "import { createApp } from '../api/app';"],
    ];
    expect(problems(refused).map((n, i) => [refused[i][0], refused[i][1], n > 0])).toEqual(refused.map(([f, c]) => [f, c, true]));
  });

  it('let through what each layer may import', () => {
    const allowed: Array<[string, string]> = [
      ['domain/flow/a.ts', "import Joi from 'joi'; import { randomUUID } from 'node:crypto'; import type { EmailMessage } from '../identity/emails';"],
      ['workflows/flow/a.ts', "import { proxyActivities } from '@temporalio/workflow'; import type { FlowActivities } from '../../activities/flow'; import type { ApprovalConfig } from '../../domain/flow/gate-settings';"],
      ['api/flow/a.ts', "import { approvalDecisionSignal } from '../../workflows/flow/approval-signals'; import { restoreAccountSignal } from '../../workflows/identity/account-deletion.signals';"],
      ['api/documents/a.ts', "import { createStorage } from '../../adapters/storage'; import type { Mailer } from '../../adapters/mail/mailer'; import { renderDocument } from '../../adapters/rendering/render-document';"],
      ['activities/identity/a.ts', "import type { AccountEmailInput } from '../../workflows/identity/account-email.workflow'; import { UserEntity } from '../../db/identity/user.entity';"],
      ['adapters/channels/a.ts', "import { createOutboundGuard } from '../http/outbound'; import type { AssetRows } from '../../db/templates/asset-rows'; import { AppError } from '../../domain/errors';"],
      ['activities/reporting/a.ts', "import { CHANNEL_SENDERS } from '../../adapters/channels';"],
      ['agent/src/a.ts', "import { AppError } from '@formwork/wire'; import { version } from '../package.json'; import { ResultFile } from './result-file';"],
      ['packages/query-runners/src/a.ts', "import { AppError } from '@formwork/wire'; import { NdjsonWriter } from './ndjson-sink';"],
      ['platform/a.ts', "import { createMailer } from '../adapters/mail'; import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/shared/search-attributes';"],
      ['scripts/a.ts', "import { startApiServer } from '../api/server';"],
    ];
    expect(problems(allowed)).toEqual(allowed.map(() => 0));
  });
});
