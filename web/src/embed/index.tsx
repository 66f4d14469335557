import { Container, Title } from '@mantine/core';

/** Placeholder until the embeddable designer is built (issue 33). */
export default function EmbeddedDesigner() {
  return (
    <Container py="xl">
      <Title order={1}>Designer</Title>
    </Container>
  );
}
