/** Request validation with Joi; the function lives in domain/ so the evaluation workers use the same one. */
export { validate } from '../domain/validation';
