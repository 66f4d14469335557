import type { EncryptionOptions } from '../../../domain/documents/output';

/** What qpdf is asked to do for output.encryption (encrypt.ts runs it; docs/documents.md "Encryption"). */

/** The permission defaults (api/documents/output.schema.ts): printing allowed, copying and changes not. */
const DEFAULT_PERMISSIONS = { print: true, copy: false, modify: false } as const;

/** qpdf's job for the options: AES-256 (R6) and the permission flags. */
export function qpdfEncryptionJob(options: EncryptionOptions, inputFile: string, outputFile: string) {
  const p = { ...DEFAULT_PERMISSIONS, ...options.permissions };
  return {
    inputFile,
    outputFile,
    encrypt: {
      userPassword: options.userPassword ?? '',
      ownerPassword: options.ownerPassword,
      '256bit': {
        // Full-quality printing or none; text and images copied out (screen readers may always read: R6 has no switch for them).
        print: p.print ? 'full' : 'none',
        extract: p.copy ? 'y' : 'n',
        // Every kind of change (assembly, forms, annotations, content) or none.
        modify: p.modify ? 'all' : 'none',
      },
    },
  };
}
