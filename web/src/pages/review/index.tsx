import { Container, Title } from '@mantine/core';

/** Placeholder until the reviewer's page moves into the app (issue 33). */
export default function ReviewArea() {
  return (
    <Container size="sm" py="xl">
      <Title order={1}>Review</Title>
    </Container>
  );
}
