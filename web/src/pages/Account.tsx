import { Alert, Button, Checkbox, Code, FileButton, Group, List, Modal, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, errorText, must } from '../api';
import { UserAvatar } from '../avatar';
import { saveAnswer } from '../download';
import { useSession } from '../session';
import { Failure } from './controls';

/**
 * The rest of the account in Settings (docs/web.md "Account"): the profile, e-mail preferences, the
 * second factor turned off or its backup codes renewed, a copy of one's data, and deleting the account.
 */

export function Profile() {
  const { user, reloadUser } = useSession();
  const [name, setName] = useState(user?.name ?? '');
  const [timezone, setTimezone] = useState<string>(user?.timezone ?? '');
  const save = useMutation({
    mutationFn: () => must(api.PATCH('/api/users/me', { body: { name, timezone: timezone || null } })),
    onSuccess: () => reloadUser(),
  });
  return (
    <Paper withBorder p="md" component="section" aria-label="Profile">
      <Stack>
        <Title order={3} size="h4">
          Profile
        </Title>
        <ProfilePicture />
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Stack>
            <TextInput label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} maw={360} />
            <TextInput label="Time zone" description="An IANA name such as Europe/Berlin; dates in e-mails use it" value={timezone} onChange={(e) => setTimezone(e.currentTarget.value)} maw={360} />
            <Failure error={save.error} />
            {save.isSuccess && <Text role="status" c="green">Profile saved</Text>}
            <Group>
              <Button type="submit" loading={save.isPending}>
                Save profile
              </Button>
            </Group>
          </Stack>
        </form>
      </Stack>
    </Paper>
  );
}

const FORMAT_NAMES: Record<string, string> = { 'image/jpeg': 'JPEG', 'image/png': 'PNG', 'image/webp': 'WebP' };

/** 2097152 → "2 MB": binary units, as the API's message and file managers count. */
function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KB`;
  return `${bytes} bytes`;
}

function dataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(new Error(`Could not read ${file.name}.`));
    reader.readAsDataURL(file);
  });
}

/**
 * The picture shown beside one's address: upload a new one (the API's formats and size limit, from
 * `GET /api/users/me/avatar/requirements`; the API judges the format by the file's content), or remove it.
 */
function ProfilePicture() {
  const { user, reloadUser } = useSession();
  const limits = useQuery({ queryKey: ['avatar-requirements'], queryFn: () => must(api.GET('/api/users/me/avatar/requirements')), staleTime: Infinity });
  const upload = useMutation({
    mutationFn: async (file: File) => {
      const maxBytes = limits.data?.maxBytes;
      // Not sent when it cannot be accepted: the API would refuse it after the whole upload.
      if (maxBytes !== undefined && file.size > maxBytes) throw new Error(`${file.name} is ${size(file.size)}; a picture may be at most ${size(maxBytes)}.`);
      return must(api.POST('/api/users/me/avatar', { body: { imageData: await dataUrl(file) } }));
    },
    onSuccess: () => reloadUser(),
  });
  const remove = useMutation({ mutationFn: () => must(api.DELETE('/api/users/me/avatar')), onSuccess: () => reloadUser() });
  const formats = limits.data?.formats.map((f) => FORMAT_NAMES[f] ?? f);
  const error = upload.error ?? remove.error ?? limits.error;
  return (
    <Group align="center" wrap="nowrap" role="group" aria-label="Picture">
      <UserAvatar size={72} alt="Your profile picture" initialsLabel={`No picture yet: the initials of ${user?.name || user?.email}`} />
      <Stack gap={6}>
        <Group gap="xs">
          <FileButton
            onChange={(file) => {
              remove.reset();
              if (file) upload.mutate(file);
            }}
            accept={limits.data?.formats.join(',') ?? 'image/jpeg,image/png,image/webp'}
          >
            {(props) => (
              <Button {...props} size="xs" variant="light" loading={upload.isPending}>
                Upload a picture
              </Button>
            )}
          </FileButton>
          {user?.profilePictureUrl && (
            <Button
              size="xs"
              variant="subtle"
              color="red"
              loading={remove.isPending}
              onClick={() => {
                upload.reset();
                remove.mutate();
              }}
            >
              Remove the picture
            </Button>
          )}
        </Group>
        {limits.data && formats && (
          <Text size="xs" c="dimmed">
            {formats.slice(0, -1).join(', ')} or {formats.at(-1)}, at most {size(limits.data.maxBytes)}.
          </Text>
        )}
        {error && (
          <Text size="sm" c="red" role="alert">
            {error.message}
          </Text>
        )}
        {upload.isSuccess && (
          <Text size="sm" c="green" role="status">
            Picture saved
          </Text>
        )}
      </Stack>
    </Group>
  );
}

const PREFERENCES = [
  ['productUpdates', 'Product updates'],
  ['weeklyDigest', 'A weekly digest of your documents'],
  ['marketingEmails', 'News and offers'],
] as const;

export function EmailPreferences() {
  const save = useMutation({
    mutationFn: (change: Partial<Record<(typeof PREFERENCES)[number][0], boolean>>) => must(api.PATCH('/api/users/me/email-preferences', { body: change })),
  });
  const stored = useQuery({ queryKey: ['email-preferences'], queryFn: () => must(api.GET('/api/users/me/email-preferences')) });
  const [prefs, setPrefs] = useState<Record<string, boolean>>();
  const shown: Record<string, boolean> | undefined = prefs ?? stored.data?.preferences;
  return (
    <Paper withBorder p="md" component="section" aria-label="E-mail preferences">
      <Stack gap="xs">
        <Title order={3} size="h4">
          E-mail preferences
        </Title>
        <Text size="sm" c="dimmed">
          Messages about your account (confirmations, password resets, approvals) always arrive.
        </Text>
        {PREFERENCES.map(([key, label]) => (
          <Checkbox
            key={key}
            label={label}
            checked={shown?.[key] ?? false}
            onChange={(e) => {
              const value = e.currentTarget.checked;
              setPrefs({ ...(shown ?? {}), [key]: value });
              save.mutate({ [key]: value });
            }}
          />
        ))}
        <Failure error={save.error} />
        {save.isSuccess && <Text role="status" size="sm" c="green">Preferences saved</Text>}
      </Stack>
    </Paper>
  );
}

/** With 2FA on: new backup codes, or turning it off (the password, and a code, as the API asks). */
export function TwoFactorManagement() {
  const { user, reloadUser } = useSession();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const codes = useMutation({ mutationFn: () => must(api.POST('/api/users/me/2fa/backup-codes', { body: { password } })) });
  const disable = useMutation({
    mutationFn: () => must(api.POST('/api/users/me/2fa/disable', { body: { password, code } })),
    onSuccess: () => reloadUser(),
  });
  if (!user?.twoFactorEnabled) return null;
  const backupCodes = (codes.data as { backupCodes?: string[] } | undefined)?.backupCodes;
  return (
    <Paper withBorder p="md" component="section" aria-label="Manage two-factor authentication">
      <Stack>
        <Title order={3} size="h4">
          Manage two-factor authentication
        </Title>
        <PasswordInput label="Password" description="Your password confirms either change" value={password} onChange={(e) => setPassword(e.currentTarget.value)} maw={360} />
        <Group align="end">
          <Button variant="default" onClick={() => codes.mutate()} loading={codes.isPending} disabled={!password}>
            New backup codes
          </Button>
        </Group>
        <Failure error={codes.error} />
        {backupCodes && (
          <Stack gap={4}>
            <Text size="sm">Your new backup codes (the earlier ones stopped working):</Text>
            <List size="sm" aria-label="New backup codes">
              {backupCodes.map((c) => (
                <List.Item key={c}>
                  <Code>{c}</Code>
                </List.Item>
              ))}
            </List>
          </Stack>
        )}
        <Group align="end">
          <TextInput label="Code to turn it off" description="From your authenticator app, or a backup code" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.currentTarget.value)} maw={240} />
          <Button color="red" variant="light" onClick={() => disable.mutate()} loading={disable.isPending} disabled={!password || !code}>
            Turn off two-factor authentication
          </Button>
        </Group>
        <Failure error={disable.error} />
        {disable.isSuccess && <Text role="status" c="green">Two-factor authentication is off</Text>}
      </Stack>
    </Paper>
  );
}

/** A copy of everything stored about the person, and deleting the account (restorable during the grace period). */
export function YourData() {
  const { signOut } = useSession();
  const [opened, { open, close }] = useDisclosure(false);
  const [password, setPassword] = useState('');
  const [exportError, setExportError] = useState<string>();
  const remove = useMutation({
    mutationFn: () => must(api.DELETE('/api/users/me', { body: { password } })),
    onSuccess: () => signOut(),
  });
  const download = async () => {
    const { data, error, response } = await api.GET('/api/users/me/export', { parseAs: 'blob' });
    if (error !== undefined || !data) return setExportError(errorText(error));
    setExportError(undefined);
    saveAnswer(data as unknown as Blob, response, 'formwork-account.json');
  };
  return (
    <Paper withBorder p="md" component="section" aria-label="Your data">
      <Stack>
        <Title order={3} size="h4">
          Your data
        </Title>
        <Group>
          <Button variant="default" onClick={() => void download()}>
            Download my data
          </Button>
          <Button color="red" variant="light" onClick={open}>
            Delete my account
          </Button>
        </Group>
        {exportError && <Alert color="red" role="alert">{exportError}</Alert>}
      </Stack>
      <Modal opened={opened} onClose={close} title="Delete your account?">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            remove.mutate();
          }}
        >
          <Stack>
            <Text size="sm">You are signed out at once, and the account with your personal project is removed after the grace period. Until then it can be restored: the e-mail you receive says how.</Text>
            <PasswordInput label="Password to confirm" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
            <Failure error={remove.error} />
            <Button type="submit" color="red" loading={remove.isPending}>
              Delete the account
            </Button>
          </Stack>
        </form>
      </Modal>
    </Paper>
  );
}
