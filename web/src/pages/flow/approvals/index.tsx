import { Stack, Title } from '@mantine/core';

/** Placeholder until the approvals inbox is built (issue 33). */
export default function ApprovalsArea() {
  return (
    <Stack>
      <Title order={2}>Approvals</Title>
    </Stack>
  );
}
