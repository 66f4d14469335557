import { Stack, Title } from '@mantine/core';
import { FLOW_TABS, SectionTabs } from '../../SectionTabs';

/** Placeholder until this area is built (issue 33). */
export default function GatesArea() {
  return (
    <Stack>
      <SectionTabs label="Flow" tabs={FLOW_TABS} />
      <Title order={2}>Gates</Title>
    </Stack>
  );
}
