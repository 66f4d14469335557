import { XMLBuilder } from 'fast-xml-parser';
import { xmlText } from '../../../domain/documents/facturx';

/**
 * The XMP metadata packet of a PDF/A document (ISO 19005-2/-3 §6.6): the same title, author,
 * subject, producer, creator tool and dates as the Info dictionary (pdfa.ts writes both from one
 * DocumentInfo), the `pdfaid` identification, and for a Factur-X invoice the `fx` schema with its
 * PDF/A extension schema description (Factur-X 1.07 §6.2.2).
 */

export interface DocumentInfo {
  title: string;
  author: string;
  subject: string;
  creator: string;
  producer: string;
  created: Date;
  modified: Date;
}

export interface PdfaId {
  part: 2 | 3;
  conformance: 'B' | 'U';
}

export interface FacturxXmp {
  documentFileName: string;
  /** "EN 16931" for the EN16931 profile. */
  conformanceLevel: string;
}

const FX_NS = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';

/** An XMP date, to the second, in UTC like the Info dictionary's. */
const xmpDate = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

const alt = (text: string) => ({ 'rdf:Alt': { 'rdf:li': { '@_xml:lang': 'x-default', '#text': text } } });

/** The fx properties' description for the PDF/A extension schema container (pdfaExtension). */
function facturxExtension() {
  const property = (name: string, description: string) => ({
    '@_rdf:parseType': 'Resource',
    'pdfaProperty:name': name,
    'pdfaProperty:valueType': 'Text',
    'pdfaProperty:category': 'external',
    'pdfaProperty:description': description,
  });
  return {
    'pdfaExtension:schemas': {
      'rdf:Bag': {
        'rdf:li': {
          '@_rdf:parseType': 'Resource',
          'pdfaSchema:schema': 'Factur-X PDFA Extension Schema',
          'pdfaSchema:namespaceURI': FX_NS,
          'pdfaSchema:prefix': 'fx',
          'pdfaSchema:property': {
            'rdf:Seq': {
              'rdf:li': [
                property('DocumentFileName', 'The name of the embedded XML document'),
                property('DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'),
                property('Version', 'The actual version of the standard applying to the embedded XML document'),
                property('ConformanceLevel', 'The conformance level of the embedded XML document'),
              ],
            },
          },
        },
      },
    },
  };
}

/** The packet, as the bytes of the catalog's /Metadata stream (UTF-8, unfiltered). */
export function xmpPacket(given: DocumentInfo, id: PdfaId | undefined, facturx?: FacturxXmp): Buffer {
  const info = { ...given, title: xmlText(given.title), subject: xmlText(given.subject) };
  const description = (attrs: Record<string, string>, body: Record<string, unknown>) => ({ '@_rdf:about': '', ...attrs, ...body });
  const descriptions = [
    description(
      { '@_xmlns:dc': 'http://purl.org/dc/elements/1.1/' },
      {
        'dc:format': 'application/pdf',
        'dc:title': alt(info.title),
        'dc:creator': { 'rdf:Seq': { 'rdf:li': info.author } },
        'dc:description': alt(info.subject),
      },
    ),
    description(
      { '@_xmlns:xmp': 'http://ns.adobe.com/xap/1.0/' },
      { 'xmp:CreatorTool': info.creator, 'xmp:CreateDate': xmpDate(info.created), 'xmp:ModifyDate': xmpDate(info.modified), 'xmp:MetadataDate': xmpDate(info.modified) },
    ),
    description({ '@_xmlns:pdf': 'http://ns.adobe.com/pdf/1.3/' }, { 'pdf:Producer': info.producer }),
    ...(id ? [description({ '@_xmlns:pdfaid': 'http://www.aiim.org/pdfa/ns/id/' }, { 'pdfaid:part': String(id.part), 'pdfaid:conformance': id.conformance })] : []),
    ...(facturx
      ? [
          description(
            {
              '@_xmlns:pdfaExtension': 'http://www.aiim.org/pdfa/ns/extension/',
              '@_xmlns:pdfaSchema': 'http://www.aiim.org/pdfa/ns/schema#',
              '@_xmlns:pdfaProperty': 'http://www.aiim.org/pdfa/ns/property#',
            },
            facturxExtension(),
          ),
          description(
            { '@_xmlns:fx': FX_NS },
            { 'fx:DocumentType': 'INVOICE', 'fx:DocumentFileName': facturx.documentFileName, 'fx:Version': '1.0', 'fx:ConformanceLevel': facturx.conformanceLevel },
          ),
        ]
      : []),
  ];
  const body = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: ' ' }).build({
    'x:xmpmeta': {
      '@_xmlns:x': 'adobe:ns:meta/',
      'rdf:RDF': { '@_xmlns:rdf': 'http://www.w3.org/1999/02/22-rdf-syntax-ns#', 'rdf:Description': descriptions },
    },
  }) as string;
  // The packet wrapper: a byte-order mark in `begin`, writable ("w") trailer, some padding for in-place edits.
  return Buffer.from(`<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>\n${body}${' '.repeat(1024)}\n<?xpacket end="w"?>`, 'utf8');
}
