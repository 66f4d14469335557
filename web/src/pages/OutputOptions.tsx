import { Accordion, Checkbox, Group, NumberInput, PasswordInput, SegmentedControl, Select, Stack, Text } from '@mantine/core';
import type { paths } from '@formwork/client';

/**
 * The generate form's output options (docs/web.md "Generate"; the API's `output`, docs/documents.md
 * "Output options"): PDF/A and the e-invoice, a signature, a password, PNG pages, a batch's archive.
 * Combinations the API refuses are not offered: PDF/A or a signature with a password, an e-invoice
 * without PDF/A-3.
 */

type GenerateBody = NonNullable<paths['/api/documents/generate']['post']['requestBody']>['content']['application/json'];
export type Output = NonNullable<GenerateBody['output']>;

export interface OutputState {
  pdfa: '' | '2b' | '3b' | '2u' | '3u';
  facturx: boolean;
  certificateId: string;
  visibleSignature: boolean;
  protect: boolean;
  ownerPassword: string;
  userPassword: string;
  print: boolean;
  copy: boolean;
  modify: boolean;
  dpi: number;
  pages: 'first' | 'all';
  archive: '' | 'zip' | 'pdf';
}

export const NO_OUTPUT: OutputState = { pdfa: '', facturx: false, certificateId: '', visibleSignature: false, protect: false, ownerPassword: '', userPassword: '', print: true, copy: false, modify: false, dpi: 150, pages: 'first', archive: '' };

/** The request's `output` for the state and format; undefined when nothing is asked. `batch`: whether the archive counts. */
export function outputOf(s: OutputState, format: string, batch: boolean): Output | undefined {
  const out: Output = {};
  if (format === 'png') out.image = { dpi: s.dpi, pages: s.pages };
  if (format !== 'excel') {
    if (s.pdfa) out.pdfa = s.pdfa;
    if (s.facturx && (s.pdfa === '3b' || s.pdfa === '3u')) out.facturx = { profile: 'EN16931' };
    if (s.certificateId) out.signature = { certificateId: s.certificateId, visible: s.visibleSignature };
    if (s.protect && !s.pdfa && !s.certificateId && s.ownerPassword) {
      out.encryption = { ownerPassword: s.ownerPassword, userPassword: s.userPassword, permissions: { print: s.print, copy: s.copy, modify: s.modify } };
    }
  }
  if (batch && s.archive) out.archive = s.archive;
  return Object.keys(out).length > 0 ? out : undefined;
}

export interface CertificateChoice {
  value: string;
  label: string;
}

export function OutputOptions({ state, onChange, format, certificates }: { state: OutputState; onChange: (next: OutputState) => void; format: string; certificates: CertificateChoice[] }) {
  const set = (patch: Partial<OutputState>) => onChange({ ...state, ...patch });
  const pdf = format !== 'excel';
  const locked = !!state.pdfa || !!state.certificateId;
  return (
    <Accordion variant="contained" chevronPosition="left">
      <Accordion.Item value="output">
        <Accordion.Control>Output options{summary(state, format) ? `: ${summary(state, format)}` : ''}</Accordion.Control>
        <Accordion.Panel>
          <Stack gap="sm">
            {format === 'png' && (
              <Group align="end">
                <NumberInput label="Resolution (DPI)" min={36} max={600} value={state.dpi} onChange={(v) => set({ dpi: typeof v === 'number' ? v : 150 })} w={160} />
                <SegmentedControl
                  aria-label="Pages as images"
                  data={[
                    { value: 'first', label: 'First page' },
                    { value: 'all', label: 'Every page (ZIP)' },
                  ]}
                  value={state.pages}
                  onChange={(v) => set({ pages: v as OutputState['pages'] })}
                />
              </Group>
            )}
            {pdf && (
              <>
                <Select
                  label="PDF/A"
                  description="Archival PDF: fonts embedded, colours and metadata declared"
                  data={[
                    { value: '', label: 'No' },
                    { value: '2b', label: 'PDF/A-2b' },
                    { value: '3b', label: 'PDF/A-3b (may embed files)' },
                    { value: '2u', label: 'PDF/A-2u' },
                    { value: '3u', label: 'PDF/A-3u (may embed files)' },
                  ]}
                  value={state.pdfa}
                  onChange={(v) => set({ pdfa: (v ?? '') as OutputState['pdfa'], ...(v ? { protect: false } : {}) })}
                  allowDeselect={false}
                  maw={360}
                />
                <Checkbox
                  label="Embed a Factur-X invoice (EN 16931)"
                  description="Made from the template's variables; needs PDF/A-3"
                  checked={state.facturx}
                  disabled={state.pdfa !== '3b' && state.pdfa !== '3u'}
                  onChange={(e) => set({ facturx: e.currentTarget.checked })}
                />
                <Select
                  label="Sign with"
                  description={certificates.length === 0 ? 'No signing certificate yet: upload one on the Team page' : 'A PAdES signature with one of the project\'s certificates'}
                  data={[{ value: '', label: 'No signature' }, ...certificates]}
                  value={state.certificateId}
                  onChange={(v) => set({ certificateId: v ?? '', ...(v ? { protect: false } : {}) })}
                  allowDeselect={false}
                  disabled={certificates.length === 0}
                  maw={360}
                />
                {state.certificateId && <Checkbox label="Show the signature on the last page" checked={state.visibleSignature} onChange={(e) => set({ visibleSignature: e.currentTarget.checked })} />}
                <Checkbox
                  label="Protect with a password"
                  description={locked ? 'Not with PDF/A or a signature: PDF/A forbids encryption, and encrypting a signed document breaks its signature' : 'AES-256'}
                  checked={state.protect && !locked}
                  disabled={locked}
                  onChange={(e) => set({ protect: e.currentTarget.checked })}
                />
                {state.protect && !locked && (
                  <Stack gap="xs" pl="md">
                    <PasswordInput label="Owner password" description="Needed to change the permissions" required autoComplete="new-password" value={state.ownerPassword} onChange={(e) => set({ ownerPassword: e.currentTarget.value })} maw={360} />
                    <PasswordInput label="Password to open" description="Empty: anyone opens it, the permissions still hold" autoComplete="new-password" value={state.userPassword} onChange={(e) => set({ userPassword: e.currentTarget.value })} maw={360} />
                    <Group>
                      <Checkbox label="Allow printing" checked={state.print} onChange={(e) => set({ print: e.currentTarget.checked })} />
                      <Checkbox label="Allow copying" checked={state.copy} onChange={(e) => set({ copy: e.currentTarget.checked })} />
                      <Checkbox label="Allow changes" checked={state.modify} onChange={(e) => set({ modify: e.currentTarget.checked })} />
                    </Group>
                  </Stack>
                )}
              </>
            )}
            <Select
              label="Batch archive"
              description="For a batch: every document in one file as well"
              data={[
                { value: '', label: 'No archive' },
                { value: 'zip', label: 'One ZIP' },
                ...(format === 'pdf' ? [{ value: 'pdf', label: 'One merged PDF' }] : []),
              ]}
              value={state.archive}
              onChange={(v) => set({ archive: (v ?? '') as OutputState['archive'] })}
              allowDeselect={false}
              maw={360}
            />
            {!pdf && <Text size="xs" c="dimmed">PDF/A, signatures and passwords apply to PDF documents.</Text>}
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}

/** What is asked, in a few words, for the closed panel's title. */
function summary(s: OutputState, format: string): string {
  const parts: string[] = [];
  if (format === 'png') parts.push(`${s.dpi} DPI${s.pages === 'all' ? ', every page' : ''}`);
  if (format !== 'excel') {
    if (s.pdfa) parts.push(`PDF/A-${s.pdfa}`);
    if (s.facturx && (s.pdfa === '3b' || s.pdfa === '3u')) parts.push('Factur-X');
    if (s.certificateId) parts.push('signed');
    if (s.protect && !s.pdfa && !s.certificateId) parts.push('password');
  }
  if (s.archive) parts.push(`batch ${s.archive.toUpperCase()}`);
  return parts.join(', ');
}
