import { Box, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/** A definition list laid out as two columns: each term as wide as it needs, its description beside it. */
export function Facts({ children }: { children: ReactNode }) {
  return (
    <Box component="dl" m={0} style={{ display: 'grid', gridTemplateColumns: 'max-content minmax(0, 1fr)', columnGap: 'var(--mantine-spacing-md)', rowGap: 4 }}>
      {children}
    </Box>
  );
}

/** A term and its description in Facts. */
export function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <Text component="dt" fw={500} size="sm">
        {term}
      </Text>
      <Text component="dd" size="sm" m={0} style={{ wordBreak: 'break-word' }}>
        {children}
      </Text>
    </>
  );
}
