import Joi from 'joi';

/** The upload's text fields (docs/templates.md "Assets and fonts"); the file is the `file` part. */
export interface UploadAssetInput {
  name?: string;
}

export const uploadAssetSchema = Joi.object<UploadAssetInput, true>({
  name: Joi.string().trim().min(1).max(200),
});

export interface ListAssetsQuery {
  kind?: 'image' | 'font' | 'pdf';
  page: number;
  limit: number;
}

export const listAssetsSchema = Joi.object<ListAssetsQuery, true>({
  kind: Joi.string().valid('image', 'font', 'pdf'),
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
});
