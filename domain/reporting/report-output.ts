import type { OutputOptions } from '../documents/output';

/** The `output` options of a report definition's pdf output (checked when the report was saved), if any. */
export const pdfOutputOf = (definition: { outputs: ReadonlyArray<{ format: string; output?: OutputOptions }> }): OutputOptions | undefined =>
  definition.outputs.find((o) => o.format === 'pdf')?.output;
