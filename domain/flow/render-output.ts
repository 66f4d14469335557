import { AppError } from '../errors';
import { checkOutput, type OutputOptions } from '../documents/output';

/**
 * What a gate's `renderConfig` says about a native render (docs/flow.md "Rendering"; docs/documents.md
 * "Quotas and the watermark on every output"): the format, the `output` options and whether a run's
 * document spends a credit instead of one of the project's free documents.
 */
export interface GateRenderSettings {
  format: 'pdf' | 'excel';
  output?: OutputOptions;
  useCredit: boolean;
}

export function gateRenderSettings(renderConfig: Record<string, unknown> | null | undefined): GateRenderSettings {
  const c = renderConfig ?? {};
  const format = c.format === 'excel' || c.format === 'xlsx' ? 'excel' : 'pdf';
  const output = c.output && typeof c.output === 'object' ? (c.output as OutputOptions) : undefined;
  return { format, ...(output ? { output } : {}), useCredit: c.useCredit === true };
}

/**
 * The gate's `renderConfig.output` against the combination rules (checkOutput), when the gate is
 * saved: 400 ERR_VALID_001 naming `renderConfig.output.<field>`. Output options apply to native
 * renders only (a custom render API's answer is stored as it comes), and encryption passwords are
 * not kept in a gate's settings (encrypt per generation, POST /api/documents/generate).
 */
export function checkGateOutput(renderMode: string, renderConfig: Record<string, unknown> | null | undefined): void {
  const { format, output } = gateRenderSettings(renderConfig);
  if (!output) return;
  if (renderMode !== 'native') {
    throw new AppError('ERR_VALID_001', "renderConfig.output applies to renderMode 'native' only", { field: 'renderConfig.output' });
  }
  if (output.encryption) {
    throw new AppError('ERR_VALID_001', 'A gate does not keep encryption passwords: renderConfig.output.encryption is not accepted', { field: 'renderConfig.output.encryption' });
  }
  try {
    checkOutput(format, output);
  } catch (err) {
    if (err instanceof AppError && typeof err.relatedInfo?.field === 'string') {
      throw new AppError(err.code, err.message, { ...err.relatedInfo, field: `renderConfig.${err.relatedInfo.field}` });
    }
    throw err;
  }
}
