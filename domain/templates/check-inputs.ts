import Joi from 'joi';
import type { TemplateDefinition } from './template.types';

/**
 * The request bodies of POST /api/templates/validate-schema and validate-variables. They are
 * validated where the check runs (domain/checks.ts, in the evaluation workers), since the body is
 * parsed there too. The definition's parts pass through as they are: the template validators check
 * them and report every problem with its path.
 */
export interface ValidateSchemaInput extends Partial<Pick<TemplateDefinition, 'variables' | 'constants' | 'calculatedVariables'>> {
  templateType: unknown;
  schema: unknown;
}

/** Variables, constants and calculated variables may come along so placeholders are checked too. */
export const validateSchemaSchema = Joi.object<ValidateSchemaInput>({
  templateType: Joi.any().required(),
  schema: Joi.any().required(),
  variables: Joi.any(),
  constants: Joi.any(),
  calculatedVariables: Joi.any(),
});

export const validateVariablesSchema = Joi.object({
  variables: Joi.any().required(),
  constants: Joi.any(),
  calculatedVariables: Joi.any(),
});
