import { Stack, Title } from '@mantine/core';
import { REPORTING_TABS, SectionTabs } from '../../SectionTabs';

/** Placeholder until this area is built (issue 33). */
export default function SourcesArea({ area }: { area: 'datasources' | 'queries' }) {
  return (
    <Stack>
      <SectionTabs label="Reporting" tabs={REPORTING_TABS} />
      <Title order={2}>{area === 'queries' ? 'Queries' : 'Datasources'}</Title>
    </Stack>
  );
}
