import Joi from 'joi';
import { FILENAME_PATTERN } from '../../domain/documents/files';
import type { OutputOptions } from '../../domain/documents/output';
import { outputSchema } from './output.schema';

/**
 * POST /api/documents/merge (docs/documents.md "Merging and appended PDFs"): the parts in order,
 * each a completed PDF job of the project or an uploaded PDF (by its position among the request's
 * files). More parts than MERGE_MAX_PARTS are refused before this shape (ERR_OUTPUT_005).
 */
const title = Joi.string().trim().min(1).max(200).description('The part\'s bookmark; default the job\'s filename, else "Part n"');

export type MergePartInput = { jobId: string; title?: string } | { upload: number; title?: string };

export interface MergeInput {
  parts: MergePartInput[];
  filename?: string;
  metadata?: Record<string, unknown>;
  useCredit: boolean;
  output?: OutputOptions;
}

export const mergeSchema = (maxParts: number) =>
  Joi.object<MergeInput, true>({
    parts: Joi.array()
      .items(
        Joi.alternatives().try(
          Joi.object({ jobId: Joi.string().uuid().required().description('A completed PDF job of the project'), title }),
          Joi.object({ upload: Joi.number().integer().min(0).max(maxParts - 1).required().description('The uploaded file at this position (0 = the first file of the multipart request)'), title }),
        ),
      )
      .min(1)
      .max(maxParts)
      .required(),
    filename: Joi.string().trim().pattern(FILENAME_PATTERN).max(200),
    /** Checked in detail by checkMetadata (flat, 10 KB, scalar values). */
    metadata: Joi.object().unknown(true),
    useCredit: Joi.boolean().default(false),
    output: outputSchema,
  });

/**
 * A multipart request: the JSON above in the text field `request`, the PDFs as files (any field
 * name, in the order `upload` numbers them).
 */
export interface MergeMultipartFields {
  request: string;
}

export const mergeMultipartSchema = Joi.object<MergeMultipartFields, true>({
  request: Joi.string().required().description('The merge request as JSON (the application/json body\'s fields)'),
});
