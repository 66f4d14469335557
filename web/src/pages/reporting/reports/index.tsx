import { Stack, Title } from '@mantine/core';
import { REPORTING_TABS, SectionTabs } from '../../SectionTabs';

/** Placeholder until this area is built (issue 33). */
export default function ReportsArea({ area }: { area: 'reports' | 'schedules' | 'runs' | 'channels' | 'imports' }) {
  return (
    <Stack>
      <SectionTabs label="Reporting" tabs={REPORTING_TABS} />
      <Title order={2}>{area[0]!.toUpperCase() + area.slice(1)}</Title>
    </Stack>
  );
}
