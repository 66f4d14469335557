import Joi from 'joi';
import { AppError } from '../../domain/errors';
import { validate } from '../../domain/validation';

/** The one validation policy (docs/errors.md "Validation errors"). */
describe('validate', () => {
  const schema = Joi.object({
    name: Joi.string().required(),
    email: Joi.string().email().required(),
    size: Joi.number().integer().min(1),
    tags: Joi.array().items(Joi.string()),
  });
  const refusal = (value: unknown, codes?: Parameters<typeof validate>[2]): AppError => {
    try {
      validate(schema, value, codes);
    } catch (err) {
      return err as AppError;
    }
    throw new Error('expected a refusal');
  };

  it('lists every problem with its path, code and message; the first is the answer', () => {
    const err = refusal({ email: 'nope', size: 0, tags: ['a', 2], colour: 'red' });
    expect(err.relatedInfo?.errors).toEqual([
      { path: 'name', code: 'ERR_VALID_005', message: "'name' is required" },
      { path: 'email', code: 'ERR_VALID_001', message: "'email' must be a valid email" },
      { path: 'size', code: 'ERR_VALID_001', message: "'size' must be greater than or equal to 1" },
      { path: 'tags.1', code: 'ERR_VALID_001', message: "'tags[1]' must be a string" },
      { path: 'colour', code: 'ERR_VALID_001', message: "'colour' is not allowed" },
    ]);
    expect([err.code, err.status, err.message, err.relatedInfo?.field]).toEqual(['ERR_VALID_005', 400, "'name' is required", 'name']);
  });

  it("uses a field's own code for its problems, but a missing field is always ERR_VALID_005", () => {
    const wrong = refusal({ name: 'n', email: 'nope' }, { email: 'ERR_USER_003' });
    expect([wrong.code, wrong.relatedInfo?.errors]).toEqual(['ERR_USER_003', [{ path: 'email', code: 'ERR_USER_003', message: expect.any(String) }]]);
    const missing = refusal({ name: 'n' }, { email: 'ERR_USER_003' });
    expect(missing.code).toBe('ERR_VALID_005');
  });

  it('a body that is not an object is one problem without a field', () => {
    const err = refusal('text');
    expect(err.code).toBe('ERR_VALID_001');
    expect(err.relatedInfo).toEqual({ errors: [{ path: '', code: 'ERR_VALID_001', message: "'value' must be of type object" }] });
  });

  it('answers the converted value when there is no problem', () => {
    expect(validate(schema, { name: 'n', email: 'a@b.co', size: '3' })).toEqual({ name: 'n', email: 'a@b.co', size: 3 });
  });
});
