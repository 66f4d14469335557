import { parse as parseYaml } from 'yaml';
import { AppError } from '../../errors';
import { isJrxml, parseJrxml } from './jrxml';
import { isMetabaseDocument, parseMetabase } from './metabase';
import { IMPORT_LIMITS, ImportParseError, type ImportFormat, type ParsedItem } from './model';
import { isRedashDocument, parseRedash } from './redash';
import { isZip, unzipEntries, type ZipCaps } from './zip';

/**
 * A model file's format and items (docs/reporting.md "Imports"): the format is the one asked for or recognised from
 * the content (a zip's entries each on their own); 400 ERR_IMP_002 when nothing is recognised,
 * ERR_IMP_003 when the file is not readable as its format (`relatedInfo.errors`).
 */

export interface ParsedFile {
  format: ImportFormat;
  items: ParsedItem[];
}

/** Depth of JSON/YAML a model may nest (Metabase cards are shallow). */
const MAX_DEPTH = 64;
/**
 * Elements one document may have, counted before it is parsed (docs/security.md "Reporting: caps
 * while reading"): a linear scan of the text counts the characters that open an element (lines,
 * commas, brackets and braces; `<` in XML), so a 50 MB JSON array of ones inside a 51 KB zip is
 * refused in milliseconds instead of becoming gigabytes of objects. A real card, query or report
 * has hundreds to a few thousand.
 */
const MAX_DOCUMENT_ELEMENTS = 100_000;

/** An upper bound of the elements a document's text can hold (see MAX_DOCUMENT_ELEMENTS). */
function elementCount(text: string, xml: boolean): number {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    // < ; otherwise \n , [ {
    if (xml ? c === 0x3c : c === 0x0a || c === 0x2c || c === 0x5b || c === 0x7b) n += 1;
  }
  return n;
}

function tooDeep(v: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return true;
  if (typeof v !== 'object' || v === null) return false;
  for (const child of Object.values(v)) if (tooDeep(child, depth + 1)) return true;
  return false;
}

type Document = { kind: 'xml'; text: string } | { kind: 'data'; value: unknown };

/** JSON, or YAML (aliases capped by the yaml library: no billion laughs), or XML kept as text. */
function readDocument(text: string, path: string): Document {
  const t = text.replace(/^\uFEFF/, '');
  const xml = /^\s*</.test(t);
  if (elementCount(t, xml) > MAX_DOCUMENT_ELEMENTS) throw new ImportParseError([{ path, message: `more than ${MAX_DOCUMENT_ELEMENTS} elements` }]);
  if (xml) return { kind: 'xml', text: t };
  let value: unknown;
  try {
    value = /^\s*[[{]/.test(t) ? JSON.parse(t) : parseYaml(t, { maxAliasCount: 100, uniqueKeys: false, prettyErrors: false, merge: false });
  } catch (err) {
    throw new ImportParseError([{ path, message: `not valid JSON or YAML: ${String((err as Error).message).slice(0, 200)}` }]);
  }
  if (tooDeep(value)) throw new ImportParseError([{ path, message: `nested more than ${MAX_DEPTH} levels` }]);
  return { kind: 'data', value };
}

function formatOf(doc: Document): ImportFormat | null {
  if (doc.kind === 'xml') return isJrxml(doc.text) ? 'jrxml' : null;
  if (isMetabaseDocument(doc.value)) return 'metabase';
  if (isRedashDocument(doc.value)) return 'redash';
  return null;
}

function itemsOf(format: ImportFormat, doc: Document, path: string): ParsedItem[] {
  if (format === 'jrxml') {
    if (doc.kind !== 'xml') throw new ImportParseError([{ path, message: 'a JRXML file is XML' }]);
    return parseJrxml(doc.text, path);
  }
  if (doc.kind !== 'data') throw new ImportParseError([{ path, message: `a ${format} file is JSON or YAML` }]);
  if (format === 'metabase' ? !isMetabaseDocument(doc.value) : !isRedashDocument(doc.value)) {
    throw new ImportParseError([{ path, message: format === 'metabase' ? 'not a Metabase card (no dataset_query)' : 'not a Redash query (no query and data_source_id)' }]);
  }
  return format === 'metabase' ? parseMetabase(doc.value, path) : parseRedash(doc.value, path);
}

const unrecognised = () => new AppError('ERR_IMP_002', 'Unrecognised model format: expected a Metabase card, a Redash query or a JRXML report');
const invalidFile = (err: ImportParseError) => new AppError('ERR_IMP_003', undefined, { errors: err.errors.slice(0, 50) });

/** The file's items in the asked (or recognised) format. */
export async function parseModelFile(bytes: Buffer, caps: ZipCaps, asked?: ImportFormat): Promise<ParsedFile> {
  if (isZip(bytes)) return parseZip(bytes, caps, asked);
  const doc = (() => {
    try {
      return readDocument(bytes.toString('utf8'), '$');
    } catch (err) {
      throw err instanceof ImportParseError ? invalidFile(err) : err;
    }
  })();
  const format = asked ?? formatOf(doc);
  if (!format) throw unrecognised();
  try {
    return { format, items: itemsOf(format, doc, '$') };
  } catch (err) {
    throw err instanceof ImportParseError ? invalidFile(err) : err;
  }
}

const MODEL_ENTRY = /\.(ya?ml|json|jrxml|xml)$/i;

/** A zip (e.g. a Metabase serialization dump): every model entry of one format; other entries are left out. */
async function parseZip(bytes: Buffer, caps: ZipCaps, asked?: ImportFormat): Promise<ParsedFile> {
  const entries = await unzipEntries(bytes, caps, (name) => MODEL_ENTRY.test(name) && !name.split('/').some((s) => s.startsWith('.') || s === '__MACOSX'));
  const errors: Array<{ path: string; message: string }> = [];
  let format: ImportFormat | undefined = asked;
  const items: ParsedItem[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = entry.name.slice(0, 200);
    try {
      const doc = readDocument(entry.bytes.toString('utf8'), path);
      const found = formatOf(doc);
      // Entries of no known model (a Metabase dump's databases, collections, settings) are left out.
      if (!found || (format && found !== format)) continue;
      format = found;
      items.push(...itemsOf(found, doc, path));
    } catch (err) {
      if (!(err instanceof ImportParseError)) throw err;
      errors.push(...err.errors);
    }
    if (items.length > IMPORT_LIMITS.items) break;
  }
  if (errors.length > 0) throw invalidFile(new ImportParseError(errors));
  if (!format) throw unrecognised();
  return { format, items: items.slice(0, IMPORT_LIMITS.items) };
}
