import Joi from 'joi';

/**
 * The request bodies of POST /api/templates/validate-schema and validate-variables. They are
 * validated where the check runs (domain/checks.ts, in the evaluation workers), since the body is
 * parsed there too. The definition's parts pass through as they are: the template validators check
 * them and report every problem with its path.
 */
/**
 * A value taken as it came (`Joi.any()`): any JSON value, which the template validators check.
 * Written so, not `unknown`, because Joi's strict schema map (`Joi.object<T, true>`) has no schema
 * for `unknown`; `NonNullable<unknown> | null` is `unknown` without `undefined`.
 */
export type PassedThrough = NonNullable<unknown> | null;

export interface ValidateSchemaInput {
  templateType: PassedThrough;
  schema: PassedThrough;
  variables?: PassedThrough;
  constants?: PassedThrough;
  calculatedVariables?: PassedThrough;
}

/** Variables, constants and calculated variables may come along so placeholders are checked too. */
export const validateSchemaSchema = Joi.object<ValidateSchemaInput, true>({
  templateType: Joi.any().required(),
  schema: Joi.any().required(),
  variables: Joi.any(),
  constants: Joi.any(),
  calculatedVariables: Joi.any(),
});

export interface ValidateVariablesInput {
  variables: PassedThrough;
  constants?: PassedThrough;
  calculatedVariables?: PassedThrough;
}

export const validateVariablesSchema = Joi.object<ValidateVariablesInput, true>({
  variables: Joi.any().required(),
  constants: Joi.any(),
  calculatedVariables: Joi.any(),
});
