import { Alert, Button, CopyButton, Group, Modal, Stack, Text, TextInput, type ButtonProps } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';
import type { components } from '@formwork/client';

type PageMeta = components['schemas']['PageMeta'];

/**
 * A secret the API shows once (an API key, an OAuth client's secret): read-only, with "Copy". It lives
 * in the dialog's state only; once the dialog closes nothing on the page holds it.
 */
export function ShownOnce({ label, value, copyLabel }: { label: string; value: string; copyLabel?: string }) {
  return (
    <Group align="end" wrap="nowrap">
      <TextInput label={label} readOnly value={value} flex={1} onFocus={(e) => e.currentTarget.select()} spellCheck={false} />
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button color={copied ? 'teal' : 'blue'} onClick={copy} aria-label={copyLabel} miw={96}>
            {copied ? 'Copied' : 'Copy'}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}

/**
 * A button that asks first: `name` is its accessible name ("Remove Ada"), `title` the dialog's
 * question, `children` what happens, `confirm` the dialog's button that does it.
 */
export function ConfirmButton({
  label,
  name,
  title,
  confirm,
  onConfirm,
  children,
  ...button
}: { label: string; name: string; title: string; confirm: string; onConfirm: () => void; children: ReactNode } & ButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button size="compact-sm" variant="light" color="red" aria-label={name} onClick={open} {...button}>
        {label}
      </Button>
      <Modal opened={opened} onClose={close} title={title}>
        <Stack>
          <Text size="sm">{children}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Keep it
            </Button>
            <Button
              color="red"
              onClick={() => {
                onConfirm();
                close();
              }}
            >
              {confirm}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

/** "Previous"/"Next" (or other words) and where one is, for a list answered with the API's page `meta`. */
export function Pager({ meta, onPage, previous = 'Previous', next = 'Next', of }: { meta: PageMeta | undefined; onPage: (page: number) => void; previous?: string; next?: string; of: string }) {
  if (!meta || meta.totalPages <= 1) return null;
  return (
    <Group aria-label={`Pages of ${of}`} role="group">
      <Button size="xs" variant="default" disabled={!meta.hasPreviousPage} onClick={() => onPage(meta.page - 1)}>
        {previous}
      </Button>
      <Text size="sm">
        Page {meta.page} of {meta.totalPages}
      </Text>
      <Button size="xs" variant="default" disabled={!meta.hasNextPage} onClick={() => onPage(meta.page + 1)}>
        {next}
      </Button>
    </Group>
  );
}

/** A date and time as the person's browser writes them; "never" for none. */
export function when(iso: string | null | undefined, none = 'never'): string {
  return iso ? new Date(iso).toLocaleString() : none;
}

/** A failed call's message as an alert a screen reader announces; nothing while there is none. */
export function Failure({ error }: { error: Error | null | undefined }) {
  if (!error) return null;
  return (
    <Alert color="red" role="alert">
      {error.message}
    </Alert>
  );
}
