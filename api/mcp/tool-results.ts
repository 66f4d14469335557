import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../domain/errors';

/**
 * What a tool answers. A success carries `structuredContent` (checked by clients against the
 * tool's output schema) and the same JSON as text for clients that read only text. A failure is
 * a result with `isError: true` whose text is the catalogued code, the message and a next step
 * the model can act on; it carries no structured content, which would have to match the output
 * schema of a success.
 */

/** Most bytes of a submitted payload a result echoes back; the rest stays readable through REST. */
const MAX_ECHO_BYTES = 16 * 1024;

export function success(data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
}

/**
 * The value itself when its JSON is at most MAX_ECHO_BYTES; else null, and `notes[field]` says
 * how large it was and where to read it whole.
 */
export function capEcho(value: unknown, field: string, readWhole: string, notes: Record<string, string>): unknown {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
  if (bytes <= MAX_ECHO_BYTES) return value;
  notes[field] = `${field} left out: it is ${bytes} bytes and MCP results echo at most ${MAX_ECHO_BYTES}; read it with ${readWhole}`;
  return null;
}

function nextStep(err: AppError): string {
  const info = err.relatedInfo ?? {};
  if (err.code === 'ERR_AUTH_005' && typeof info.required === 'string') {
    return `This credential lacks the '${info.required}' permission: ask a project admin for an API key with it, or use another tool (tools/list shows what this key may call).`;
  }
  if (typeof info.retryAfter === 'number') return `Wait ${info.retryAfter} seconds, then call the tool again with the same arguments.`;
  if (err.code === 'FLOW.GATE_NOT_FOUND') return 'Check the gate id, shortId or slug with list_gates.';
  if (err.code === 'FLOW.RUN_NOT_FOUND') return 'Check the run id (UUID or frun_ shortId) with list_runs.';
  if (err.code === 'FLOW.GATE_PAUSED') return 'The gate does not accept runs now: ask a project member to activate it, or submit to another gate.';
  if (err.code === 'ERR_TMPL_001' || err.code === 'ERR_TMPL_002') return 'Check the template id, shortId or slug with list_templates; only published templates generate documents.';
  if (err.code === 'ERR_JOB_001') return 'Check the job id (the jobId generate_document answered).';
  if (typeof info.field === 'string') return `Fix the argument '${info.field}' and call the tool again.`;
  if (err.status === 413) return 'Send a smaller payload.';
  if (err.status >= 500 || err.retryable) return 'A temporary failure: call the tool again in a moment.';
  if (err.status === 402 || err.code.startsWith('ERR_FLOW_LIMIT')) return 'A plan limit was reached: a project owner can change the plan or buy credits.';
  return 'Correct the request as the message says; calling again unchanged fails the same way.';
}

export function failure(err: AppError): CallToolResult {
  const error = {
    code: err.code,
    status: err.status,
    message: err.message,
    retryable: err.retryable,
    ...(err.relatedInfo ? { relatedInfo: err.relatedInfo } : {}),
    nextStep: nextStep(err),
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }] };
}

/** Anything but an AppError is a fault of ours: logged by the caller, answered without internals. */
export function internalFailure(): CallToolResult {
  return failure(new AppError('ERR_INTERNAL_001'));
}
