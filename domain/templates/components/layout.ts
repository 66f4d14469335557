import Joi from 'joi';
import type { SpacerProps } from '../template.types';
import { cssLength } from './context';
import { length } from './props';

export const dividerProps = Joi.object({});
export const dividerHtml = (): string => '<hr class="fw-divider">';

export const spacerProps = Joi.object({ height: length.default(10) });
export const spacerHtml = (p: SpacerProps): string => `<div class="fw-spacer" style="height:${cssLength(p.height, '10mm')}"></div>`;

export const pageBreakProps = Joi.object({});
export const pageBreakHtml = (): string => '<div class="fw-page-break"></div>';
