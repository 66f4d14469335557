/** The parser class behind joi-to-json's 'open-api-3.1' mode (the package types only its `parse` function). */
declare module 'joi-to-json/lib/parsers/open-api-3.1' {
  type Schema = Record<string, unknown>;
  class JoiOpenApiThreePointOneSchemaParser {
    constructor(options?: Record<string, unknown>);
    parse(joiSpec: unknown, definitions?: Record<string, unknown>, level?: number): Schema;
    protected _setStringFieldProperties(fieldSchema: Schema, fieldDefn: Record<string, unknown>): void;
    protected _setObjectProperties(schema: Schema, joiSpec: Record<string, unknown>, definitions: Record<string, unknown>, level: number): void;
    protected _addNullTypeIfNullable(fieldSchema: Schema, fieldDefn: Record<string, unknown>): void;
  }
  export = JoiOpenApiThreePointOneSchemaParser;
}
