import { Button, FileInput, Group, Paper, PasswordInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must } from '../api';
import { useSession } from '../session';
import { ConfirmButton, Failure, when } from './controls';

/** The largest PKCS#12 the API takes (api/documents/signing-certificates.schema.ts P12_MAX_BYTES). */
const P12_MAX_BYTES = 64 * 1024;

/** The project's signing certificates, for the generate form's "Sign with" (members read them). */
export function useSigningCertificates() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['signing-certificates', team?.id],
    queryFn: () => must(api.GET('/api/signing-certificates')),
    enabled: !!team && team.role !== 'viewer',
  });
}

const base64Of = async (file: File) => {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
};

/**
 * The Team page's "Signing certificates" (docs/documents.md "Signatures"; docs/web.md "Team"): the
 * PKCS#12 files documents are signed with. Members see them; owners and admins upload (the file and
 * its password go to the API once and are never shown again) and delete them.
 */
export function SigningCertificates() {
  const { team } = useSession();
  const canEdit = team?.role === 'owner' || team?.role === 'admin';
  const queries = useQueryClient();
  const list = useSigningCertificates();
  const [file, setFile] = useState<File | null>(null);
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [timestampUrl, setTimestampUrl] = useState('');
  const [tooLarge, setTooLarge] = useState(false);
  const refresh = () => queries.invalidateQueries({ queryKey: ['signing-certificates', team?.id] });
  const upload = useMutation({
    mutationFn: async (chosen: File) =>
      must(api.POST('/api/signing-certificates', { body: { p12: await base64Of(chosen), password, ...(name ? { name } : {}), ...(timestampUrl ? { timestampUrl } : {}) } })),
    onSuccess: async () => {
      setFile(null);
      setPassword('');
      setName('');
      setTimestampUrl('');
      await refresh();
    },
  });
  const remove = useMutation({ mutationFn: (id: string) => must(api.DELETE('/api/signing-certificates/{id}', { params: { path: { id } } })), onSuccess: refresh });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (file) upload.mutate(file);
  };
  if (team?.role === 'viewer') return null;
  const rows = list.data?.data ?? [];
  return (
    <Paper withBorder p="md" component="section" aria-label="Signing certificates">
      <Stack gap="xs">
        <Title order={3} size="h4">
          Signing certificates
        </Title>
        <Text size="sm" c="dimmed">
          Documents asked with a signature are signed with one of these (PAdES). The file&apos;s password is kept encrypted and never shown again.
        </Text>
        <Failure error={list.error ?? remove.error} />
        {rows.length === 0 ? (
          <Text size="sm">No signing certificate yet.</Text>
        ) : (
          <Table.ScrollContainer minWidth={560}>
            <Table aria-label="Signing certificates of the project">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Subject</Table.Th>
                  <Table.Th>Valid until</Table.Th>
                  <Table.Th>Timestamps</Table.Th>
                  {canEdit && <Table.Th>Actions</Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((c) => (
                  <Table.Tr key={c.id}>
                    <Table.Td>{c.name}</Table.Td>
                    <Table.Td>{c.subject}</Table.Td>
                    <Table.Td>{when(c.notAfter)}</Table.Td>
                    <Table.Td>{c.timestampUrl ?? 'none'}</Table.Td>
                    {canEdit && (
                      <Table.Td>
                        <ConfirmButton label="Delete" name={`Delete ${c.name}`} title={`Delete ${c.name}?`} confirm="Delete the certificate" onConfirm={() => remove.mutate(c.id)}>
                          Documents asked with this certificate afterwards fail.
                        </ConfirmButton>
                      </Table.Td>
                    )}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        {canEdit && (
          <form onSubmit={submit} aria-label="Upload a signing certificate">
            <Stack gap="xs" maw={420}>
              <Failure error={upload.error} />
              <FileInput
                label="PKCS#12 file (.p12, .pfx)"
                accept=".p12,.pfx,application/x-pkcs12"
                value={file}
                onChange={(f) => {
                  setTooLarge(!!f && f.size > P12_MAX_BYTES);
                  setFile(f);
                }}
                error={tooLarge ? `At most ${P12_MAX_BYTES / 1024} KB` : undefined}
                clearable
              />
              <PasswordInput label="Its password" autoComplete="off" value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
              <TextInput label="Certificate name" description="Default: the certificate's common name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
              <TextInput label="Timestamp authority URL" description="Optional: RFC 3161; signatures then carry a trusted time" value={timestampUrl} onChange={(e) => setTimestampUrl(e.currentTarget.value)} />
              <Group>
                <Button type="submit" disabled={!file || tooLarge} loading={upload.isPending}>
                  Upload certificate
                </Button>
              </Group>
            </Stack>
          </form>
        )}
      </Stack>
    </Paper>
  );
}
